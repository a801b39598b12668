import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { retryOnConcurrencyConflict } from '../db/errors.js'
import { invalidGrant, invalidScope, invalidTarget, type OAuthError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import {
  findRefreshTokenRecord,
  type RefreshTokenIssue,
  type RefreshTokenRefusal,
  refreshTokenRefusal,
  revokeRefreshFamily,
  rotateRefreshToken as rotateRefreshTokenRow,
} from './refresh-token.repository.js'

/** The invalid_target descriptions of both grant types (RFC 8707 §2.2). */
export const RESOURCE_NOT_AUTHORIZED = 'This resource was not named in the authorization request.'
export const RESOURCE_AMBIGUOUS =
  'The authorization names several resources: name one with the resource parameter (one audience per token).'

export type RefreshLifetimes = Pick<Config, 'refreshTokenTtl' | 'refreshTokenAbsoluteTtl'>

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
}

/** grants.last_used_at is for people ("last used 3 minutes ago"): a minute of precision is plenty. */
export const LAST_USED_PRECISION_SECONDS = 60

/**
 * Rotates a refresh token. The success path is one statement; only a refusal reads the token again
 * to say why, and a token presented after it was rotated revokes its family (and only it): someone
 * holds a copy of it.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: RefreshLifetimes,
  input: RefreshRotation,
  metricHooks: { refreshTokenReused?(): void } = {},
): Promise<IssuedRefreshToken> {
  const now = clock.now()
  const tokenHash = sha256(input.refreshToken)
  const refreshToken = newSecret()
  const issue = await retryOnConcurrencyConflict(() =>
    rotateRefreshTokenRow(db, {
      tokenHash,
      newTokenHash: sha256(refreshToken),
      clientId: input.clientId,
      requestedScopes: input.scopes ?? null,
      resource: input.resource ?? null,
      now,
      newTokenExpiresAt: addSeconds(now, lifetimes.refreshTokenTtl),
      touchGrantBefore: addSeconds(now, -LAST_USED_PRECISION_SECONDS),
    }),
  )
  if (issue) return { ...issue, refreshToken }

  // The slow path only: why did it not rotate?
  const state = await findRefreshTokenRecord(db, tokenHash)
  if (!state) throw invalidGrant('The refresh token is invalid.')
  const refusal = refreshTokenRefusal(state, now, {
    clientId: input.clientId,
    requestedScopes: input.scopes ?? null,
    resource: input.resource ?? null,
  })
  if (refusal === 'rotated') {
    await revokeRefreshFamily(db, { familyId: state.familyId }, now, 'refresh_token_reuse')
    metricHooks.refreshTokenReused?.()
  }
  // undefined: everything checks out now, so it changed under us (a concurrent rotation or revocation).
  throw refusal ? REFUSALS[refusal]() : invalidGrant('The refresh token is no longer valid.')
}

const REFUSALS: Record<RefreshTokenRefusal, () => OAuthError> = {
  other_client: () => invalidGrant('The refresh token was issued to another client.'),
  rotated: () => invalidGrant('The refresh token has already been used; its token family is now revoked.'),
  revoked: () => invalidGrant('The refresh token has been revoked.'),
  expired: () => invalidGrant('The refresh token has expired.'),
  scope_exceeded: () => invalidScope('The requested scope exceeds the scope originally granted.'),
  resource_not_authorized: () => invalidTarget(RESOURCE_NOT_AUTHORIZED),
  resource_ambiguous: () => invalidTarget(RESOURCE_AMBIGUOUS),
}
