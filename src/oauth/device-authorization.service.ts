import type { Kysely } from 'kysely'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import type { AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import {
  ClientRefused,
  type Client,
  type ClientService,
  requestableScopes,
} from '../clients/client.service.js'
import { DEVICE_CODE_GRANT_TYPE } from '../clients/grant-types.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import {
  invalidGrant,
  invalidRequest,
  invalidScope,
  invalidTarget,
  OAuthError,
  unknownClient,
} from '../errors.js'
import { approveDeviceConsent } from '../grants/device-consent.js'
import type { IssuedRefreshToken } from '../grants/refresh-rotation.js'
import { dpopRequired } from '../grants/dpop-binding.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isUuid, newSecret, newTimeOrderedUuid, newUuid } from '../lib/identifiers.js'
import { isKnownScope, isSubset, normalizeScopes, parseScopeParameter } from '../lib/scopes.js'
import { sha256 } from '../lib/secrets.js'
import { newUserCode, normalizeUserCode } from '../lib/user-code.js'
import type { TokenParameters } from '../input/token-parameters.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'
import type { CounterStore } from '../rate-limit/counter-store.js'
import { RateLimitedError } from '../errors.js'
import {
  answerDeviceAuthorization,
  type DeviceAuthorization,
  type DevicePollOutcome,
  findOpenDeviceAuthorization,
  insertDeviceAuthorization,
  pollDeviceAuthorization,
} from './device-authorization.repository.js'
import { authorizationTargets } from './resource-targets.js'

export type { DeviceAuthorization }

/** Wrong user codes an address may type in USER_CODE_WINDOW_MS: 10 guesses of 20^8 codes. */
const USER_CODE_MISSES = 10
/** Entries of one request's user code (each a lookup that found it). */
const USER_CODE_ENTRIES = 5
const USER_CODE_WINDOW_MS = 15 * 60_000

/** RFC 8628 §3.2: the device authorization response. */
export interface DeviceAuthorizationResponse {
  device_code: string
  user_code: string
  verification_uri: string
  verification_uri_complete: string
  expires_in: number
  interval: number
}

export type DeviceAuthorizationConfig = Pick<
  Config,
  | 'issuer'
  | 'deviceCodeTtl'
  | 'deviceCodeInterval'
  | 'refreshTokenTtl'
  | 'refreshTokenAbsoluteTtl'
  | 'requireResource'
  | 'clientMetadataScopes'
  | 'dynamicRegistrationScopes'
  | 'clientMetadataDefaultScopes'
  | 'dynamicRegistrationDefaultScopes'
>

/** How each poll that issues nothing is answered (RFC 8628 §3.5, RFC 6749 §5.2). */
const POLL_ANSWERS: Record<Exclude<DevicePollOutcome, 'issue'>, () => OAuthError> = {
  unknown: () => invalidGrant('The device code is invalid.'),
  other_client: () => invalidGrant('The device code is invalid.'),
  client_disabled: () => unknownClient(),
  grant_type_not_allowed: () =>
    new OAuthError('unauthorized_client', 'This client may not use the device authorization grant.'),
  used: () => invalidGrant('The device code has already been used.'),
  expired: () => new OAuthError('expired_token', 'The device code has expired: start again.'),
  dpop_required: () => dpopRequired(),
  slow_down: () => new OAuthError('slow_down', 'Polling too fast: wait the interval, now 5 seconds longer.'),
  pending: () => new OAuthError('authorization_pending', 'The user has not answered yet.'),
  // RFC 8628 §3.5: a token endpoint error, 400 like the others (RFC 6749 §5.2).
  denied: () => new OAuthError('access_denied', 'The user denied the request.', 400),
  scope_not_allowed: () =>
    new OAuthError('unauthorized_client', 'The client is no longer allowed the scopes of this request.'),
  grant_revoked: () => invalidGrant('The grant behind this device code has been revoked.'),
}

/**
 * The device authorization grant (RFC 8628): the endpoint's requests, the user's answer on the
 * /device page, and the token endpoint's poll. Device and user codes are kept as SHA-256 only.
 */
export function createDeviceAuthorizationService(deps: {
  db: Kysely<Database>
  clock: Clock
  config: DeviceAuthorizationConfig
  audit: AuditRecorder
  clients: Pick<ClientService, 'resolveForAuthorization' | 'isAcceptedClientId'>
  resourceServers: Pick<ResourceServerService, 'findTargets'>
  /** The rate-limit store: wrong user codes per address, entries per request. */
  store: CounterStore
}) {
  const { db, clock, config } = deps

  /** The client, if it may use this grant; invalid_client or unauthorized_client otherwise. */
  async function deviceClient(clientId: string, from?: RequestFacts): Promise<Client> {
    const client = await deps.clients.resolveForAuthorization(clientId, from).catch((err: unknown) => {
      if (err instanceof ClientRefused) throw unknownClient()
      throw err
    })
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT_TYPE))
      throw new OAuthError('unauthorized_client', 'This client may not use the device authorization grant.')
    return client
  }

  /** As at /oauth/authorize: within what the client may ask for now (scope-policy.ts), else its defaults. */
  function requestedScopes(scope: string | undefined, client: Client): string[] {
    const requestable = requestableScopes(config, client)
    if (scope === undefined) {
      if (!requestable.defaults) throw invalidScope('scope is required.')
      return requestable.defaults
    }
    const scopes = parseScopeParameter(scope)
    if (!scopes) throw invalidScope('scope must be scope names separated by single spaces.')
    if (!scopes.every(isKnownScope)) throw invalidScope('scope names an unknown scope.')
    if (!isSubset(scopes, requestable.allowed))
      throw invalidScope('This application may not ask for some of these scopes.')
    return normalizeScopes(scopes)
  }

  return {
    /** POST /api/oauth/device_authorization (RFC 8628 §3.1, §3.2). */
    async start(
      params: TokenParameters,
      clientId: string,
      from?: RequestFacts,
    ): Promise<DeviceAuthorizationResponse> {
      if (!deps.clients.isAcceptedClientId(clientId)) throw unknownClient()
      const client = await deviceClient(clientId, from)
      const scopes = requestedScopes(params.scope, client)
      const resources = params.resource === undefined ? [] : [params.resource]
      const problem = params.resource === undefined ? null : resourceIdentifierProblem(params.resource)
      if (problem) throw invalidTarget(`resource ${problem}.`)
      const targets = await authorizationTargets(deps.resourceServers, resources, scopes, {
        required: config.requireResource,
        scopesDefaulted: params.scope === undefined,
      })
      if (!targets.ok) throw new OAuthError(targets.error, targets.description)
      const now = clock.now()
      // A user code's hash is unique: on the rare collision with a live (or not yet swept) one, draw again.
      for (let attempt = 1; ; attempt++) {
        const deviceCode = newSecret()
        const userCode = newUserCode()
        try {
          await insertDeviceAuthorization(db, {
            id: newUuid(),
            deviceCodeHash: sha256(deviceCode),
            userCodeHash: sha256(normalizeUserCode(userCode)!),
            clientId: client.id,
            scopes,
            resources,
            intervalSeconds: config.deviceCodeInterval,
            createdAt: now,
            expiresAt: addSeconds(now, config.deviceCodeTtl),
          })
        } catch (err) {
          if (attempt < 3 && isUniqueViolation(err)) continue
          throw err
        }
        const verificationUri = `${config.issuer}/device`
        return {
          device_code: deviceCode,
          user_code: userCode,
          verification_uri: verificationUri,
          verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
          expires_in: config.deviceCodeTtl,
          interval: config.deviceCodeInterval,
        }
      }
    },

    /**
     * The open request a typed user code names; undefined for a typo, an unknown, used or expired
     * code. Throttled against guessing (RFC 8628 §5.1): an address that typed USER_CODE_MISSES wrong
     * codes in the window is refused (RateLimitedError) before any lookup, and one request takes at
     * most USER_CODE_ENTRIES entries (a code read over someone's shoulder is not entered everywhere).
     */
    async enterUserCode(typed: unknown, address: string): Promise<DeviceAuthorization | undefined> {
      const byAddress = `device_user_code:${address}`
      const seen = await deps.store.peek(byAddress)
      if (seen.count >= USER_CODE_MISSES) throw new RateLimitedError('device_user_code', seen.resetInMs)
      const code = normalizeUserCode(typed)
      const found =
        code === undefined
          ? undefined
          : await findOpenDeviceAuthorization(db, { userCodeHash: sha256(code) }, clock.now())
      if (!found) {
        await deps.store.increment(byAddress, USER_CODE_WINDOW_MS)
        return undefined
      }
      const entries = await deps.store.increment(`device_user_code_entries:${found.id}`, USER_CODE_WINDOW_MS)
      if (entries.count > USER_CODE_ENTRIES) throw new RateLimitedError('device_user_code', entries.resetInMs)
      return found
    },

    /** The open request with this id (the consent page's). */
    findOpen(id: unknown): Promise<DeviceAuthorization | undefined> {
      return isUuid(id) ? findOpenDeviceAuthorization(db, { id }, clock.now()) : Promise.resolve(undefined)
    },

    /** The person allowed it: grant created or widened and the request approved, together. False: answered or expired. */
    approve(request: DeviceAuthorization, userId: string, from?: RequestFacts): Promise<boolean> {
      return approveDeviceConsent(
        { db, clock, audit: deps.audit },
        { userId, clientId: request.clientId, scopes: request.scopes, resources: request.resources, from },
        (trx, grantId) =>
          answerDeviceAuthorization(trx, {
            id: request.id,
            userId,
            grantId,
            status: 'approved',
            now: clock.now(),
          }),
      )
    },

    /** The person denied it: the device's next poll gets access_denied. */
    deny(request: DeviceAuthorization, userId: string): Promise<boolean> {
      return answerDeviceAuthorization(db, {
        id: request.id,
        userId,
        grantId: null,
        status: 'denied',
        now: clock.now(),
      })
    },

    /** The token endpoint's poll (RFC 8628 §3.4): one statement; tokens once, on the first poll after Allow. */
    async poll(input: {
      deviceCode: string
      clientId: string
      dpopJkt?: string | undefined
    }): Promise<IssuedRefreshToken> {
      if (input.deviceCode.length > 512) throw invalidRequest('device_code is too long.')
      const now = clock.now()
      const refreshToken = newSecret()
      const polled = await pollDeviceAuthorization(db, {
        deviceCodeHash: sha256(input.deviceCode),
        clientId: input.clientId,
        dpopJkt: input.dpopJkt ?? null,
        familyId: newTimeOrderedUuid(),
        tokenHash: sha256(refreshToken),
        now,
        familyExpiresAt: addSeconds(now, config.refreshTokenAbsoluteTtl),
        tokenExpiresAt: addSeconds(now, config.refreshTokenTtl),
      })
      if (polled.outcome !== 'issue' || !polled.issue)
        throw POLL_ANSWERS[polled.outcome as Exclude<DevicePollOutcome, 'issue'>]()
      return { ...polled.issue, refreshToken }
    },
  }
}

export type DeviceAuthorizationService = ReturnType<typeof createDeviceAuthorizationService>
