import type { Kysely } from 'kysely'
import {
  type AuditActor,
  type AuditRecorder,
  NO_AUDIT,
  type RequestFacts,
  SYSTEM,
} from '../audit/audit.service.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { OAuthError, RateLimitedError } from '../errors.js'
import type { GrantService } from '../grants/grant.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isClientId, newClientId, newSecret } from '../lib/identifiers.js'
import { constantTimeEqual, sha256 } from '../lib/secrets.js'
import type { CounterStore } from '../rate-limit/counter-store.js'
import { ClientMetadataProblem, readStatedMetadata } from './client-metadata.js'
import {
  countDynamicClientsWithoutGrant,
  deleteDynamicClients,
  disableDynamicClients,
  findDynamicClient,
  lockUnusedDynamicClients,
} from './client-registration.repository.js'
import { type Client, defaultScopesOf, insertClient } from './client.repository.js'
import { selfRegisteredScopes } from './scope-policy.js'
import type { ReservedNames } from './client-names.js'

/**
 * Dynamic client registration (RFC 7591) with RFC 7592 read and delete, public clients only, kept
 * clean: per-address rate limit, a cap on registrations that never obtained a grant, and removal
 * of unused ones by housekeeping (their client_id then answers invalid_client, so agents register
 * again). The registration access token is 256 random bits, stored as its SHA-256.
 */

export type DynamicRegistrationConfig = Pick<
  Config,
  | 'issuer'
  | 'dynamicRegistration'
  | 'dynamicRegistrationToken'
  | 'dynamicRegistrationRateLimit'
  | 'dynamicRegistrationMaxUnused'
  | 'dynamicRegistrationUnusedTtl'
  | 'clientMetadataScopes'
  | 'dynamicRegistrationScopes'
  | 'clientMetadataDefaultScopes'
  | 'dynamicRegistrationDefaultScopes'
>

const HOUR_MS = 3_600_000

/** RFC 7591 §3.2.2 errors: 400 with `invalid_redirect_uri` or `invalid_client_metadata`. */
function registrationError(problem: ClientMetadataProblem): OAuthError {
  return new OAuthError(
    problem.field === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata',
    problem.message,
    400,
  )
}

export function registrationJson(client: Client, issuer: string, registrationToken?: string) {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    // What it registered: its default (docs/design.md §4); it may ask for more within the policy.
    scope: defaultScopesOf(client).join(' '),
    token_endpoint_auth_method: 'none',
    grant_types: client.grantTypes,
    // No response type for a client without the code grant (a device-only one: RFC 7591 §2.1).
    response_types: client.grantTypes.includes('authorization_code') ? ['code'] : [],
    ...(client.metadata.homepageUrl ? { client_uri: client.metadata.homepageUrl } : {}),
    ...(client.metadata.privacyPolicyUrl ? { policy_uri: client.metadata.privacyPolicyUrl } : {}),
    ...(client.metadata.termsUrl ? { tos_uri: client.metadata.termsUrl } : {}),
    ...(client.requirePar ? { require_pushed_authorization_requests: true } : {}),
    registration_client_uri: `${issuer}/api/oauth/register/${client.id}`,
    ...(registrationToken ? { registration_access_token: registrationToken } : {}),
  }
}

export function createDynamicRegistrationService(deps: {
  db: Kysely<Database>
  clock: Clock
  config: DynamicRegistrationConfig
  store: CounterStore
  grants: Pick<GrantService, 'revokeAllForRemovedClients'>
  audit?: AuditRecorder
  registered?: () => void
  removed?: (count: number) => void
  /** A client was added or removed: the CORS origins are read again. */
  changed?: () => void
  /** The names a self-declared one may not borrow (client-names.ts); none when not given. */
  reservedNames?: () => Promise<ReservedNames>
}) {
  const { db, clock, config } = deps
  const audit = deps.audit ?? NO_AUDIT

  /**
   * Removes dynamic registrations like any revocation, in the caller's transaction: disabled first
   * (the revocation feed announces each as client-disabled, with its client_id), every live grant
   * revoked with `reason` (a grant.revoked audit row each), then deleted. The ids removed.
   */
  async function retire(
    trx: Kysely<Database>,
    ids: readonly string[],
    reason: 'registration_deleted' | 'registration_expired',
    actor: AuditActor,
    from?: RequestFacts,
  ): Promise<string[]> {
    const disabled = await disableDynamicClients(trx, ids, clock.now())
    await deps.grants.revokeAllForRemovedClients(disabled, reason, actor, trx, from)
    await deleteDynamicClients(trx, disabled)
    return disabled
  }

  return {
    enabled: config.dynamicRegistration !== 'off',

    /** POST /api/oauth/register: the RFC 7591 §3.2.1 answer, with the registration access token. */
    async register(
      body: unknown,
      initialToken: string | undefined,
      address: string,
      from?: RequestFacts,
    ): Promise<{ client: Client; registrationToken: string }> {
      if (config.dynamicRegistration === 'token') {
        const expected = config.dynamicRegistrationToken ?? ''
        if (initialToken === undefined || !constantTimeEqual(initialToken, expected))
          throw new OAuthError(
            'invalid_token',
            'Registration needs the initial access token of the operator.',
            401,
          )
      }
      const count = await deps.store.increment(`registration:${address}`, HOUR_MS)
      if (count.count > config.dynamicRegistrationRateLimit)
        throw new RateLimitedError('registration', count.resetInMs)
      let stated
      try {
        stated = readStatedMetadata(body)
      } catch (err) {
        if (err instanceof ClientMetadataProblem) throw registrationError(err)
        throw err
      }
      if (
        stated.name !== null &&
        deps.reservedNames &&
        (await deps.reservedNames()).borrowedFrom(stated.name)
      )
        throw new OAuthError(
          'invalid_client_metadata',
          'client_name is reserved: it equals or looks like (Unicode UTS #39 confusables) the name of this service, of an application the operator registered, or a name the operator reserved.',
          400,
        )
      if ((await countDynamicClientsWithoutGrant(db)) >= config.dynamicRegistrationMaxUnused)
        throw new OAuthError(
          'temporarily_unavailable',
          'Too many registrations are waiting for their first use; try again later.',
          503,
        )
      const scopes = selfRegisteredScopes(config, 'dynamic', stated.scopes)
      if (!scopes)
        throw new OAuthError(
          'invalid_client_metadata',
          'scope names no scope this server gives such applications.',
          400,
        )
      const registrationToken = newSecret()
      const client = await db.transaction().execute(async (trx) => {
        const created = await insertClient(trx, {
          id: newClientId(),
          name: stated.name ?? 'Unnamed application',
          redirectUris: stated.redirectUris,
          scopes: scopes.scopes,
          defaultScopes: scopes.defaultScopes,
          grantTypes: stated.grantTypes,
          kind: 'dynamic',
          registrationTokenHash: sha256(registrationToken),
          requirePar: stated.requirePar,
          createdAt: clock.now(),
          metadata: {
            homepageUrl: stated.homepageUrl,
            privacyPolicyUrl: stated.privacyPolicyUrl,
            termsUrl: stated.termsUrl,
          },
        })
        await audit.record(trx, {
          type: 'client.registered',
          actor: { kind: 'anonymous' },
          target: { kind: 'client', id: created.id },
          clientId: created.id,
          details: {
            name: created.name,
            redirect_uris: created.redirectUris,
            scopes: created.scopes,
            default_scopes: defaultScopesOf(created),
            standing: created.standing,
          },
          from,
        })
        return created
      })
      deps.registered?.()
      deps.changed?.()
      return { client, registrationToken }
    },

    /** RFC 7592 read: the registration, when the token is its own; undefined otherwise. */
    async read(clientId: string, registrationToken: string | undefined): Promise<Client | undefined> {
      if (!isClientId(clientId) || registrationToken === undefined) return undefined
      return findDynamicClient(db, clientId, sha256(registrationToken))
    },

    /**
     * RFC 7592 delete: the registration, its grants revoked and announced first (see retire); false
     * when the token is not its own.
     */
    async remove(
      clientId: string,
      registrationToken: string | undefined,
      from?: RequestFacts,
    ): Promise<boolean> {
      if (!isClientId(clientId) || registrationToken === undefined) return false
      const client = await findDynamicClient(db, clientId, sha256(registrationToken))
      if (!client) return false
      const removed = await inRetriedTransaction(db, async (trx) => {
        const actor = { kind: 'client' as const, id: clientId }
        const ids = await retire(trx, [clientId], 'registration_deleted', actor, from)
        if (ids.length > 0)
          await audit.record(trx, {
            type: 'client.registration_deleted',
            actor,
            target: { kind: 'client', id: clientId },
            clientId,
            from,
          })
        return ids.length > 0
      })
      if (!removed) return false
      deps.removed?.(1)
      deps.changed?.()
      return true
    },

    /** Housekeeping: deletes registrations with no grant used for DYNAMIC_REGISTRATION_UNUSED_TTL. */
    async removeUnused(batchSize: number): Promise<number> {
      const before = addSeconds(clock.now(), -config.dynamicRegistrationUnusedTtl)
      let total = 0
      for (;;) {
        const ids = await inRetriedTransaction(db, async (trx) => {
          const found = await lockUnusedDynamicClients(trx, before, batchSize)
          const ids = await retire(trx, found, 'registration_expired', SYSTEM)
          if (ids.length > 0)
            await audit.record(
              trx,
              ids.map((id) => ({
                type: 'client.registration_expired' as const,
                actor: SYSTEM,
                target: { kind: 'client' as const, id },
                clientId: id,
              })),
            )
          return ids
        })
        total += ids.length
        if (ids.length === 0 || ids.length < batchSize) break
      }
      if (total > 0) {
        deps.removed?.(total)
        deps.changed?.()
      }
      return total
    },
  }
}

export type DynamicRegistrationService = ReturnType<typeof createDynamicRegistrationService>
