import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { isForeignKeyViolation, retryOnConcurrencyConflict } from '../db/errors.js'
import { invalidGrant, invalidTarget, OAuthError, unknownClient } from '../errors.js'
import { dpopRequired } from './dpop-binding.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { s256Challenge } from '../lib/pkce.js'
import { newSecret, newTimeOrderedUuid } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import {
  type CodeRedemptionRow,
  type CodeRefusal,
  codeRefusal,
  type CodeRedemptionValues,
} from './code-redemption.repository.js'
import { touchGrant } from './grant.repository.js'
import { revokeRefreshFamily } from './refresh-token.repository.js'
import type { AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import {
  familyRevokedEvent,
  type IssuedRefreshToken,
  LAST_USED_PRECISION_SECONDS,
  type RefreshLifetimes,
  RESOURCE_AMBIGUOUS,
  RESOURCE_NOT_AUTHORIZED,
} from './refresh-rotation.js'

export interface CodeRedemption {
  code: string
  codeVerifier: string
  clientId: string
  /** Checked against the code's when sent (RFC 6749 §4.1.3). */
  redirectUri?: string | undefined
  /** RFC 8707: the one resource the access token is for, when named. */
  resource?: string | undefined
  /** RFC 9449: the thumbprint of the request's DPoP key; the family is bound to it. */
  dpopJkt?: string | undefined
  /** The token request, for the audit row of a replay. */
  from?: RequestFacts | undefined
}

/** How each refusal of a code is answered (RFC 6749 §5.2). */
const REFUSALS: Record<CodeRefusal, () => OAuthError> = {
  other_client: () => invalidGrant('The authorization code was issued to another client.'),
  expired: () => invalidGrant('The authorization code has expired.'),
  redirect_uri_mismatch: () => invalidGrant('redirect_uri does not match the one the code was issued for.'),
  verifier_mismatch: () => invalidGrant('code_verifier does not match the code_challenge.'),
  scope_not_allowed: () =>
    new OAuthError('unauthorized_client', 'The client is not allowed the scopes of this code.'),
  resource_not_authorized: () => invalidTarget(RESOURCE_NOT_AUTHORIZED),
  resource_ambiguous: () => invalidTarget(RESOURCE_AMBIGUOUS),
  grant_revoked: () => invalidGrant('The grant behind this code has been revoked.'),
  // RFC 9449 §10: the authorization request named a key (dpop_jkt) and this proof is not made with it.
  dpop_key_mismatch: () =>
    invalidGrant('The authorization code is bound to another DPoP key (dpop_jkt) than this proof’s.'),
}

/**
 * Exchanges an authorization code for a refresh family: check the client, consume the code (the one
 * conditional UPDATE, so of concurrent redemptions exactly one proceeds), check it, start the family
 * and its first refresh token, and record the family on the code — one statement
 * (redeemAuthorizationCodeRows), so one round trip and nothing half-written; then mark the grant used
 * when its last use is over a minute old.
 *
 * A code that was found but fails a check (other client, expired, wrong redirect_uri, wrong
 * verifier) stays consumed: codes are single-use (RFC 9700 §2.1.1, RFC 6749 §4.1.2), and burning it
 * leaves an attacker holding a stolen code exactly one guess at the verifier. The legitimate client
 * then starts a new authorization, which it must do anyway on any failure.
 */
export async function redeemAuthorizationCode(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: RefreshLifetimes,
  input: CodeRedemption,
  metricHooks: { codeReplayed?(): void },
  audit: AuditRecorder,
  /** The redemption statement, shared among concurrent requests (batchedWrite over redeemAuthorizationCodeRows). */
  redeemRow: (values: CodeRedemptionValues) => Promise<CodeRedemptionRow>,
): Promise<IssuedRefreshToken> {
  const now = clock.now()
  const codeHash = sha256(input.code)
  const refreshToken = newSecret()
  const values = {
    codeHash,
    clientId: input.clientId,
    redirectUri: input.redirectUri ?? null,
    expectedChallenge: s256Challenge(input.codeVerifier),
    resource: input.resource ?? null,
    dpopJkt: input.dpopJkt ?? null,
    tokenHash: sha256(refreshToken),
    now,
    familyExpiresAt: addSeconds(now, lifetimes.refreshTokenAbsoluteTtl),
    tokenExpiresAt: addSeconds(now, lifetimes.refreshTokenTtl),
  }
  const attempt = () => redeemRow({ ...values, familyId: newTimeOrderedUuid() })
  let outcome: CodeRedemptionRow
  try {
    outcome = await retryOnConcurrencyConflict(attempt)
  } catch (err) {
    // The grant was revoked or deleted between the statement's check and its insert: a foreign key
    // refused, the whole statement rolled back, and the code is unconsumed but under a dead grant.
    if (isForeignKeyViolation(err)) throw REFUSALS.grant_revoked()
    throw err
  }
  // An unknown or disabled client: nothing was consumed or written.
  if (!outcome.clientActive) throw unknownClient()
  // The client requires DPoP (clients.require_dpop) and the request had no proof: nothing consumed.
  if (outcome.dpopRequired) throw dpopRequired()
  if (outcome.issue) {
    const staleBefore = addSeconds(now, -LAST_USED_PRECISION_SECONDS)
    if (!outcome.grantLastUsedAt || outcome.grantLastUsedAt < staleBefore) {
      // The exchange has committed: failing to note the grant's use must not withhold its tokens.
      await touchGrant(db, outcome.issue.grantId, now, staleBefore).catch(() => {})
    }
    return { ...outcome.issue, refreshToken }
  }
  if (!outcome.consumed) {
    // Unknown, or used before. If used, the first redemption's tokens are presumed stolen.
    // The family's revocation and its audit row commit together (rare: a theft signal).
    const family = await db.transaction().execute(async (trx) => {
      const revoked = await revokeRefreshFamily(trx, { startedByCodeHash: codeHash }, now, 'code_replay')
      if (revoked)
        await audit.record(trx, familyRevokedEvent('code.replayed', revoked, input.clientId, input.from))
      return revoked
    })
    if (family) metricHooks.codeReplayed?.()
    throw invalidGrant('The authorization code is invalid or has already been used.')
  }
  // Consumed but refused: say why (the code stays burned). The statement refused it, so when every
  // other line holds, its grant was not live.
  const refusal = codeRefusal(outcome.consumed, values, outcome.clientScopes ?? [], false)
  throw REFUSALS[refusal ?? 'grant_revoked']()
}
