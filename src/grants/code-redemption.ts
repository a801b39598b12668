import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { invalidGrant, OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { verifyS256 } from '../lib/pkce.js'
import { isSubset } from '../lib/scopes.js'
import { randomToken, sha256 } from '../lib/secrets.js'
import {
  type AuthorizationCode,
  consumeAuthorizationCode,
  setAuthorizationCodeFamily,
} from './authorization-code.repository.js'
import { revokeFamilyStartedByCode, startRefreshFamily } from './refresh-token.repository.js'
import type { IssuedRefreshToken, RefreshLifetimes } from './refresh-rotation.js'

export interface CodeRedemption {
  code: string
  codeVerifier: string
  clientId: string
  /** Checked against the code's when sent (RFC 6749 §4.1.3). */
  redirectUri?: string | undefined
  /** The scopes the client is registered for: a code for more is unauthorized_client. */
  clientScopes: readonly string[]
}

/** Why a code found unconsumed still issues nothing; undefined when it may be redeemed. */
function refusal(code: AuthorizationCode, input: CodeRedemption, now: Date): OAuthError | undefined {
  if (code.clientId !== input.clientId)
    return invalidGrant('The authorization code was issued to another client.')
  if (code.expiresAt.getTime() <= now.getTime()) return invalidGrant('The authorization code has expired.')
  if (input.redirectUri !== undefined && input.redirectUri !== code.redirectUri)
    return invalidGrant('redirect_uri does not match the one the code was issued for.')
  if (!verifyS256(input.codeVerifier, code.codeChallenge))
    return invalidGrant('code_verifier does not match the code_challenge.')
  if (!isSubset(code.scopes, input.clientScopes))
    return new OAuthError('unauthorized_client', 'The client is not allowed the scopes of this code.')
  return undefined
}

/**
 * Exchanges an authorization code for a refresh family: consume the code (the one conditional
 * UPDATE, so of concurrent redemptions exactly one proceeds), check it, start the family and its
 * first refresh token, mark the grant used, and record the family on the code — one transaction.
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
  events: { codeReplayed?(): void } = {},
): Promise<IssuedRefreshToken> {
  const now = clock.now()
  const codeHash = sha256(input.code)
  const refreshToken = randomToken()
  const outcome = await db.transaction().execute(async (trx) => {
    const code = await consumeAuthorizationCode(trx, codeHash, now)
    if (!code) return { replayed: true } as const
    const refused = refusal(code, input, now)
    if (refused) return { refused } // commit: the code stays burned
    const issue = await startRefreshFamily(trx, {
      grantId: code.grantId,
      clientId: code.clientId,
      scopes: code.scopes,
      tokenHash: sha256(refreshToken),
      now,
      familyExpiresAt: addSeconds(now, lifetimes.refreshTokenAbsoluteTtl),
      tokenExpiresAt: addSeconds(now, lifetimes.refreshTokenTtl),
    })
    if (!issue) return { refused: invalidGrant('The grant behind this code has been revoked.') }
    await setAuthorizationCodeFamily(trx, codeHash, issue.familyId)
    return { issue }
  })
  if ('replayed' in outcome) {
    // Unknown, or used before. If used, the first redemption's tokens are presumed stolen.
    if (await revokeFamilyStartedByCode(db, codeHash, now, 'code_replay')) events.codeReplayed?.()
    throw invalidGrant('The authorization code is invalid or has already been used.')
  }
  if ('refused' in outcome) throw outcome.refused
  return { ...outcome.issue, refreshToken }
}
