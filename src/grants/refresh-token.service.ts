import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT } from '../audit/audit.service.js'
import type { Clock } from '../lib/clock.js'
import { isBase64url256Bits } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import {
  type IssuedRefreshToken,
  type RefreshLifetimes,
  type RefreshRotation,
  type RefreshRotationHooks,
  type RefreshSettings,
  rotateRefreshToken,
  type SuccessorSeal,
} from './refresh-rotation.js'
import { batchedWrite } from '../db/batched-write.js'
import {
  revokeRefreshFamily,
  type RefreshRotation as RotationRow,
  rotateRefreshTokens,
} from './refresh-token.repository.js'

export type { IssuedRefreshToken, RefreshLifetimes, RefreshRotation, SuccessorSeal }

/** What the refresh-token service reports as it happens (metrics listen here). */
export interface RefreshTokenMetricHooks extends RefreshRotationHooks {
  revoked?(kind: 'refresh_family', count: number): void
}

/** Refresh tokens after their family started: rotation and RFC 7009 revocation. */
export function createRefreshTokenService(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: RefreshSettings,
  metricHooks: RefreshTokenMetricHooks = {},
  audit: AuditRecorder = NO_AUDIT,
  /** Holds a successor for the retry window; without it the window answers no retry. */
  successors?: SuccessorSeal,
) {
  // Concurrent rotations of distinct tokens share one statement (see batchedWrite).
  const rotateShared = batchedWrite({
    many: (rows: RotationRow[]) => rotateRefreshTokens(db, rows),
    key: (row) => row.tokenHash,
  })
  return {
    /** refresh_token grant: rotates the token within its family. Throws OAuthError. */
    rotateRefreshToken: (input: RefreshRotation): Promise<IssuedRefreshToken> =>
      rotateRefreshToken(db, clock, lifetimes, input, metricHooks, audit, successors, rotateShared),

    /**
     * RFC 7009 for a refresh token: revokes its whole family (so the family's access tokens stop
     * introspecting active too), only when it was issued to `clientId`. Unknown tokens change nothing.
     */
    async revokeRefreshTokenFamily(token: string, clientId: string): Promise<boolean> {
      if (!isBase64url256Bits(token)) return false
      const revoked = !!(await revokeRefreshFamily(
        db,
        { refreshTokenHash: sha256(token), clientId },
        clock.now(),
        'revoked_by_client',
      ))
      if (revoked) metricHooks.revoked?.('refresh_family', 1)
      return revoked
    },
  }
}

export type RefreshTokenService = ReturnType<typeof createRefreshTokenService>
