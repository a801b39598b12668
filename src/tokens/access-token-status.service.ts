import type { Kysely } from 'kysely'
import { batchedLookup } from '../db/batched-lookup.js'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { isClientId, isUuid } from '../lib/identifiers.js'
import {
  type AccessTokenReference,
  areAccessTokensLive,
  denyAccessToken,
} from './access-token-status.repository.js'

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

/**
 * Whether an access token we signed is still good (introspection) and RFC 7009 revocation of one:
 * the database's side of an access token, beside its signing and verification.
 */
export function createAccessTokenStatusService(
  db: Kysely<Database>,
  clock: Clock,
  metricHooks: { revoked?(kind: 'access_token', count: number): void } = {},
) {
  // Introspection under load: the checks of one turn of the event loop share one statement.
  const accessTokenLive = batchedLookup((refs: AccessTokenReference[]) => areAccessTokensLive(db, refs))

  return {
    /** Grant live, family live, jti not deny-listed: one statement (shared, see above). */
    isAccessTokenLive: (ref: AccessTokenReference): Promise<boolean> =>
      isWellFormed(ref) ? accessTokenLive(ref) : Promise.resolve(false),

    /** RFC 7009 for an access token: deny-lists its jti until its exp; its family stays alive. */
    async denyAccessToken(jti: string, expiresAt: Date): Promise<void> {
      await denyAccessToken(db, jti, expiresAt, clock.now())
      metricHooks.revoked?.('access_token', 1)
    },
  }
}

export type AccessTokenStatusService = ReturnType<typeof createAccessTokenStatusService>
