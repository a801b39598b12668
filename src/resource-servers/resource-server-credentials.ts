import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { isCallerIdShape } from '../lib/identifiers.js'
import { constantTimeEqual, sha256 } from '../lib/secrets.js'
import {
  findResourceServerCredentials,
  type ResourceServerCredentials,
} from './resource-server.repository.js'

/** A resource server whose credentials were checked: its id, and its resource (null: default audience). */
export interface AuthenticatedResourceServer {
  id: string
  resource: string | null
}

/**
 * Introspection authenticates every call; the secret hashes and resource of a known server are kept
 * in memory this long (a cache age on the monotonic clock, not domain time), so the hot path is one
 * query, not two. A change made through this instance (disable, delete, secret rotation) drops its
 * entry at once; other instances see it within this age. A secret that does not match a cached
 * entry is checked against the database once more, so a new secret works everywhere at once. The
 * end of a rotation's overlap is compared with the clock at each call, cached or not. Unknown ids
 * are never cached, and the cache is bounded.
 */
const CREDENTIALS_CACHE_MS = 5_000
const CREDENTIALS_CACHE_MAX = 1_000

/** Compared against when there is no (previous) secret, so that every call does the same work. */
const NO_SECRET_HASH = sha256('no such secret')

/** The credentials of resource servers as this instance keeps them (see CREDENTIALS_CACHE_MS). */
export interface CredentialsCache {
  /** From memory while young enough, else (or when `fresh`) from the database. */
  get(id: string, fresh?: boolean): Promise<ResourceServerCredentials | undefined>
  /** A resource server changed here: its entry goes at once. */
  forget(id: string): void
}

export function createCredentialsCache(db: Kysely<Database>): CredentialsCache {
  const cache = new Map<string, ResourceServerCredentials & { at: number }>()
  return {
    async get(id, fresh = false) {
      const cached = cache.get(id)
      if (!fresh && cached && performance.now() - cached.at < CREDENTIALS_CACHE_MS) return cached
      const found = await findResourceServerCredentials(db, id)
      if (found === undefined) {
        cache.delete(id)
        return undefined
      }
      if (cache.size >= CREDENTIALS_CACHE_MAX) cache.clear()
      cache.set(id, { ...found, at: performance.now() })
      return found
    },
    forget: (id) => void cache.delete(id),
  }
}

/** Whether `secret` is this server's current secret, or its previous one inside the overlap. */
function secretMatches(clock: Clock, stored: ResourceServerCredentials | undefined, secret: string): boolean {
  const presented = sha256(secret)
  // Both comparisons always run, in constant time: the answer's timing says nothing about which.
  const current = constantTimeEqual(stored?.secretHash ?? NO_SECRET_HASH, presented)
  const previous = constantTimeEqual(stored?.previousSecretHash ?? NO_SECRET_HASH, presented)
  const overlapEnds = stored?.previousSecretExpiresAt
  const inOverlap = overlapEnds !== null && overlapEnds !== undefined && clock.now() < overlapEnds
  return stored !== undefined && (current || (previous && inOverlap && stored.previousSecretHash !== null))
}

/** The enabled resource server with this id, when its secret matches (constant-time). */
export async function checkResourceServerSecret(
  deps: { clock: Clock; credentials: CredentialsCache },
  id: string,
  secret: string,
): Promise<AuthenticatedResourceServer | undefined> {
  if (!isCallerIdShape(id)) return undefined // not an id we issue; never reaches a query
  let stored = await deps.credentials.get(id)
  // A cached entry may predate a rotation on another instance: ask the database once more.
  if (stored && !secretMatches(deps.clock, stored, secret)) stored = await deps.credentials.get(id, true)
  return stored && secretMatches(deps.clock, stored, secret) ? { id, resource: stored.resource } : undefined
}
