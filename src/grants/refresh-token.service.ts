import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT } from '../audit/audit.service.js'
import { batchedLookup } from '../db/batched-lookup.js'
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
} from './refresh-rotation.js'
import {
  findRefreshTokenRecords,
  refreshTokenRefusal,
  revokeRefreshFamily,
} from './refresh-token.repository.js'

export type { IssuedRefreshToken, RefreshLifetimes, RefreshRotation }

/** A live refresh token, as introspection reports it. */
export interface LiveRefreshToken {
  clientId: string
  userId: string
  scopes: string[]
  issuedAt: Date
  /** The token's idle expiry (never later than its family's absolute one). */
  expiresAt: Date
}

/** What the refresh-token service reports as it happens (metrics listen here). */
export interface RefreshTokenMetricHooks extends RefreshRotationHooks {
  revoked?(kind: 'refresh_family', count: number): void
}

/** Refresh tokens after their family started: rotation, liveness (introspection), RFC 7009 revocation. */
export function createRefreshTokenService(
  db: Kysely<Database>,
  clock: Clock,
  lifetimes: RefreshSettings,
  metricHooks: RefreshTokenMetricHooks = {},
  audit: AuditRecorder = NO_AUDIT,
) {
  // Introspection under load: the reads of one turn of the event loop share one statement.
  const refreshTokenRecord = batchedLookup((hashes: string[]) => findRefreshTokenRecords(db, hashes))

  return {
    /** refresh_token grant: rotates the token within its family. Throws OAuthError. */
    rotateRefreshToken: (input: RefreshRotation): Promise<IssuedRefreshToken> =>
      rotateRefreshToken(db, clock, lifetimes, input, metricHooks, audit),

    /** The refresh token if it is live now (refreshTokenRefusal finds nothing against it). */
    async findLiveRefreshToken(token: string): Promise<LiveRefreshToken | undefined> {
      if (!isBase64url256Bits(token)) return undefined
      const record = await refreshTokenRecord(sha256(token))
      if (!record || refreshTokenRefusal(record, clock.now()) !== undefined) return undefined
      return {
        clientId: record.clientId,
        userId: record.userId,
        scopes: record.scopes,
        issuedAt: record.createdAt,
        expiresAt: record.expiresAt,
      }
    },

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
