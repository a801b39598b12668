import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { retryOnConcurrencyConflict } from '../db/errors.js'
import { invalidGrant, invalidScope, invalidTarget, type OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import { DPOP_BINDING_REFUSALS, dpopBindingRefusal } from './dpop-binding.js'
import { type AuditEvent, type AuditRecorder, type RequestFacts } from '../audit/audit.service.js'
import {
  findRefreshTokenRecord,
  type RefreshTokenIssue,
  type RefreshTokenRecord,
  type RefreshTokenRefusal,
  refreshTokenRefusal,
  revokeRefreshFamily,
  type RevokedFamily,
  type RefreshRotation as RotationRow,
  type RotatedRefreshToken,
} from './refresh-token.repository.js'

/** The audit row of a theft signal: the family it revoked, the client that presented the token or code. */
export function familyRevokedEvent(
  type: 'code.replayed' | 'refresh_token.reused',
  family: RevokedFamily,
  presentedBy: string,
  from: RequestFacts | undefined,
): AuditEvent {
  return {
    type,
    from,
    actor: { kind: 'client', id: presentedBy },
    target: { kind: 'refresh_family', id: family.id },
    userId: family.userId,
    clientId: family.clientId,
    details: { grant_id: family.grantId, family_revoked: true },
  }
}

/** The invalid_target descriptions of both grant types (RFC 8707 §2.2). */
export const RESOURCE_NOT_AUTHORIZED = 'This resource was not named in the authorization request.'
export const RESOURCE_AMBIGUOUS =
  'The authorization names several resources: name one with the resource parameter (one audience per token).'

export type RefreshLifetimes = Pick<Config, 'refreshTokenTtl' | 'refreshTokenAbsoluteTtl'>
/** What rotation needs to know: the lifetimes and the retry window (REFRESH_REUSE_WINDOW). */
export type RefreshSettings = RefreshLifetimes & Pick<Config, 'refreshReuseWindow'>

/** What rotation reports as it happens (metrics listen here). */
export interface RefreshRotationHooks {
  refreshTokenReused?(): void
  /** A spent token presented inside the retry window: answered, or refused past the bound. */
  refreshRetry?(outcome: 'answered' | 'refused'): void
}

/**
 * Seals a refresh token's successor for the retry window and opens it again (the tokens domain does
 * it with the key-encryption key, see services.ts). `boundTo` is the spent token's hash: a ciphertext
 * copied onto another row does not open. seal answers null when no key is configured: then nothing is
 * held and the window answers no retry.
 */
export interface SuccessorSeal {
  seal(successor: string, boundTo: string): string | null
  open(sealed: string, boundTo: string): string | undefined
}

/** A refresh token just issued (shown once; only its hash is stored) and what it stands for. */
export interface IssuedRefreshToken extends RefreshTokenIssue {
  refreshToken: string
}

export interface RefreshRotation {
  refreshToken: string
  clientId: string
  /** A narrower set than the family's; undefined keeps the family's (RFC 6749 §6). */
  scopes?: string[] | undefined
  /** RFC 8707: the one resource the access token is for, when named. */
  resource?: string | undefined
  /** RFC 9449: the thumbprint of the request's DPoP key; a bound family needs this very key. */
  dpopJkt?: string | undefined
  /** The token request, for the audit row of a reuse. */
  from?: RequestFacts | undefined
}

/** grants.last_used_at is for people ("last used 3 minutes ago"): a minute of precision is plenty. */
export const LAST_USED_PRECISION_SECONDS = 60

/**
 * Rotates a refresh token. The success path is one statement, a retry inside the window included;
 * only a refusal reads the token again to say why. A token presented after it was rotated, outside
 * the retry window, or presented by another client than its own, revokes its family (and only it):
 * someone holds a copy of it.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: RefreshSettings,
  input: RefreshRotation,
  metricHooks: RefreshRotationHooks,
  audit: AuditRecorder,
  successors: SuccessorSeal | undefined,
  /** The rotation statement, shared among concurrent requests (batchedWrite over rotateRefreshTokens). */
  rotateRow: (row: RotationRow) => Promise<RotatedRefreshToken | undefined>,
): Promise<IssuedRefreshToken> {
  const now = clock.now()
  const tokenHash = sha256(input.refreshToken)
  const refreshToken = newSecret()
  const windowOn = lifetimes.refreshReuseWindow > 0
  const retryWindowStart = windowOn ? addSeconds(now, -lifetimes.refreshReuseWindow) : null
  // Held only if this request rotates the token; a retry keeps the first rotation's successor.
  const successorSealed = windowOn ? (successors?.seal(refreshToken, tokenHash) ?? null) : null
  const issue = await retryOnConcurrencyConflict(() =>
    rotateRow({
      tokenHash,
      newTokenHash: sha256(refreshToken),
      clientId: input.clientId,
      requestedScopes: input.scopes ?? null,
      resource: input.resource ?? null,
      dpopJkt: input.dpopJkt ?? null,
      now,
      retryWindowStart,
      successorSealed,
      newTokenExpiresAt: addSeconds(now, lifetimes.refreshTokenTtl),
      touchGrantBefore: addSeconds(now, -LAST_USED_PRECISION_SECONDS),
    }),
  )
  if (issue) {
    const { retried, successorSealed: held, ...issued } = issue
    if (!retried) return { ...issued, refreshToken }
    // A retry: the successor the rotation issued, so that every answer continues one lineage.
    const successor = held === null ? undefined : successors?.open(held, tokenHash)
    if (successor === undefined) {
      // Sealed under a key-encryption key no longer configured (a rekey in between): no answer.
      metricHooks.refreshRetry?.('refused')
      throw REFUSALS.retries_exhausted()
    }
    metricHooks.refreshRetry?.('answered')
    return { ...issued, refreshToken: successor }
  }

  // The slow path only: why did it not rotate?
  const state = await findRefreshTokenRecord(db, tokenHash)
  if (!state) throw INVALID()
  // Before the other refusals: a bound token without its key revokes nothing (see dpop-binding.ts).
  const binding = state.clientId === input.clientId ? checkDpopBinding(state, input) : undefined
  if (binding) throw DPOP_BINDING_REFUSALS[binding]()
  const refusal = refreshTokenRefusal(state, now, {
    clientId: input.clientId,
    requestedScopes: input.scopes ?? null,
    resource: input.resource ?? null,
    retryWindowStart,
  })
  // A spent token again after the window, or any token of this family in another client's hands:
  // someone holds a copy of it (a theft signal), so the family goes.
  const leaked = refusal === 'rotated' || refusal === 'other_client'
  if (leaked) {
    // The family's revocation and its audit row commit together (rare).
    await db.transaction().execute(async (trx) => {
      const reason = refusal === 'rotated' ? 'refresh_token_reuse' : 'refresh_token_other_client'
      const family = await revokeRefreshFamily(trx, { familyId: state.familyId }, now, reason)
      if (family)
        await audit.record(
          trx,
          familyRevokedEvent('refresh_token.reused', family, input.clientId, input.from),
        )
    })
    metricHooks.refreshTokenReused?.()
  }
  if (refusal === 'retries_exhausted') metricHooks.refreshRetry?.('refused')
  // undefined: everything checks out now, so it changed under us (a concurrent rotation or revocation).
  throw refusal ? REFUSALS[refusal]() : invalidGrant('The refresh token is no longer valid.')
}

/** The DPoP binding of the token's family, as the rotation statement checked it. */
export function checkDpopBinding(state: RefreshTokenRecord, input: Pick<RefreshRotation, 'dpopJkt'>) {
  return dpopBindingRefusal(
    { dpopJkt: state.familyDpopJkt, clientRequiresDpop: state.clientRequiresDpop },
    input.dpopJkt ?? null,
  )
}

/** An unknown token; another client's token gets the very same answer, so that it tells nothing. */
const INVALID = () => invalidGrant('The refresh token is invalid.')

const REFUSALS: Record<RefreshTokenRefusal, () => OAuthError> = {
  other_client: INVALID,
  rotated: () => invalidGrant('The refresh token has already been used; its token family is now revoked.'),
  retries_exhausted: () =>
    invalidGrant('The refresh token has already been used; use the refresh token of an earlier answer.'),
  revoked: () => invalidGrant('The refresh token has been revoked.'),
  expired: () => invalidGrant('The refresh token has expired.'),
  scope_exceeded: () => invalidScope('The requested scope exceeds the scope originally granted.'),
  resource_not_authorized: () => invalidTarget(RESOURCE_NOT_AUTHORIZED),
  resource_ambiguous: () => invalidTarget(RESOURCE_AMBIGUOUS),
}
