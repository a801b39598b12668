import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { isBase64url256Bits, isClientId, isUuid } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import { batchedLookup } from '../db/batched-lookup.js'
import {
  type AccessTokenReference,
  areAccessTokensLive,
  denyAccessToken,
  findRefreshTokenRecords,
} from './token-status.repository.js'
import { revokeRefreshFamily } from './refresh-token.repository.js'

export type { AccessTokenReference }

/** A reference every id of which has the shape of ours; another cannot name a live token. */
function isWellFormed(ref: AccessTokenReference): boolean {
  return (
    isUuid(ref.jti) &&
    isUuid(ref.grantId) &&
    isUuid(ref.familyId) &&
    isUuid(ref.userId) &&
    isClientId(ref.clientId)
  )
}

/** A live refresh token, as introspection reports it. */
export interface LiveRefreshToken {
  clientId: string
  userId: string
  scopes: string[]
  issuedAt: Date
  /** The token's idle expiry (never later than its family's absolute one). */
  expiresAt: Date
}

/** The part of the grant service that answers "is this token still good?" and revokes single tokens. */
export function createTokenStatus(
  db: Kysely<Database>,
  clock: Clock,
  events: { revoked?(kind: 'refresh_family' | 'access_token', count: number): void } = {},
) {
  // Introspection under load: the checks of one turn of the event loop share one statement.
  const accessTokenLive = batchedLookup((refs: AccessTokenReference[]) => areAccessTokensLive(db, refs))
  const refreshTokenRecord = batchedLookup((hashes: string[]) => findRefreshTokenRecords(db, hashes))

  return {
    /** Grant live, family live, client enabled, jti not deny-listed: one statement (shared, see above). */
    isAccessTokenLive: (ref: AccessTokenReference): Promise<boolean> =>
      isWellFormed(ref) ? accessTokenLive(ref) : Promise.resolve(false),

    /** The refresh token if it is live now: unrotated, unexpired, family and grant live, client enabled. */
    async findLiveRefreshToken(token: string): Promise<LiveRefreshToken | undefined> {
      if (!isBase64url256Bits(token)) return undefined
      const record = await refreshTokenRecord(sha256(token))
      const now = clock.now().getTime()
      if (
        !record ||
        record.rotatedAt !== null ||
        record.familyRevokedAt !== null ||
        record.grantRevokedAt !== null ||
        record.clientDisabledAt !== null ||
        record.expiresAt.getTime() <= now ||
        record.familyExpiresAt.getTime() <= now
      )
        return undefined
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
      const revoked = await revokeRefreshFamily(
        db,
        { refreshTokenHash: sha256(token), clientId },
        clock.now(),
        'revoked_by_client',
      )
      if (revoked) events.revoked?.('refresh_family', 1)
      return revoked
    },

    /** RFC 7009 for an access token: deny-lists its jti until its exp; its family stays alive. */
    async denyAccessToken(jti: string, expiresAt: Date): Promise<void> {
      await denyAccessToken(db, jti, expiresAt, clock.now())
      events.revoked?.('access_token', 1)
    },
  }
}
