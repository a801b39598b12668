import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import type { SigningKeySet } from './signing-key-set.js'
import { listPublishedSigningKeys, type SigningKeyInfo } from './signing-key.repository.js'

/**
 * Resource servers may cache the JWKS this long (its Cache-Control max-age); jose's remote key set
 * also refetches when it meets an unknown kid, so a short max-age is enough. A key made by the
 * schedule is published at least this long, plus a poll and a margin, before it signs.
 */
export const JWKS_MAX_AGE_SECONDS = 60

/** The JWKS (RFC 7517): the keys whose tokens may be alive or are about to be. */
export function createJwksPublisher(
  db: Kysely<Database>,
  clock: Clock,
  keySet: SigningKeySet,
  pollIntervalMs: number,
) {
  let published: { keys: SigningKeyInfo[]; loadedAt: number; generation: number } | undefined
  return {
    /** Public JWKs of the keys whose tokens may be alive or are about to be (RFC 7517 key set members). */
    async publishedJwks(): Promise<Record<string, unknown>[]> {
      // A rotation on another instance signs at once: its key must be here before a resource server,
      // meeting the new kid, refetches the key set from this instance. The notification may not have
      // arrived yet, so the state is checked (one small query, shared by requests arriving together);
      // the key set is read again only when it changed. Unreachable database: the keys in memory.
      await keySet.syncSinceNow().catch(keySet.reportSyncFailure)
      const now = clock.now().getTime()
      const cutoff = keySet.cutoff().getTime()
      // The rows are kept for one poll interval (the JWKS is asked for often and changes only at a
      // rotation; a change anywhere is notified and drops them); the cut-off is applied on every
      // call, so a retired key leaves on the second.
      if (
        !published ||
        published.generation !== keySet.generation() ||
        now - published.loadedAt >= pollIntervalMs ||
        now < published.loadedAt
      ) {
        const generation = keySet.generation()
        published = { keys: await listPublishedSigningKeys(db, new Date(cutoff)), loadedAt: now, generation }
      }
      return published.keys
        .filter((k) => !keySet.isRevoked(k.kid))
        .filter((k) => k.pending || k.retiredAt === null || k.retiredAt.getTime() > cutoff)
        .map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg, use: 'sig' }))
    },
  }
}
