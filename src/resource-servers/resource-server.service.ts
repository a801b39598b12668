import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Database } from '../db/database.js'
import { newResourceServerId, newSecret } from '../lib/identifiers.js'
import { constantTimeEqual, sha256 } from '../lib/secrets.js'
import {
  findResourceTargets,
  findResourceServerSecretHash,
  insertResourceServer,
  listResourceServers,
  type ResourceServer,
  type ResourceTarget,
} from './resource-server.repository.js'

export type { ResourceTarget }

export const newResourceServerSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
})

/**
 * Introspection authenticates every call; the secret hash of a known server is kept in memory this
 * long (a cache age on the monotonic clock, not domain time), so the hot path is one query, not two.
 * Unknown ids are never cached, and the cache is bounded.
 */
const SECRET_HASH_CACHE_MS = 5_000
const SECRET_HASH_CACHE_MAX = 1_000

export function createResourceServerService(db: Kysely<Database>) {
  const cache = new Map<string, { hash: string; at: number }>()

  async function secretHash(id: string): Promise<string | undefined> {
    const cached = cache.get(id)
    if (cached && performance.now() - cached.at < SECRET_HASH_CACHE_MS) return cached.hash
    const hash = await findResourceServerSecretHash(db, id)
    if (hash === undefined) {
      cache.delete(id)
      return undefined
    }
    if (cache.size >= SECRET_HASH_CACHE_MAX) cache.clear()
    cache.set(id, { hash, at: performance.now() })
    return hash
  }

  return {
    /**
     * Registers a resource server. The secret (256 random bits) is returned once and stored only as
     * its SHA-256: with that much entropy a slow hash adds nothing, and introspection stays fast.
     */
    async createResourceServer(
      input: z.output<typeof newResourceServerSchema>,
    ): Promise<ResourceServer & { secret: string }> {
      const secret = newSecret()
      const server = await insertResourceServer(db, {
        id: newResourceServerId(),
        name: input.name,
        secretHash: sha256(secret),
      })
      return { ...server, secret }
    },
    listResourceServers: () => listResourceServers(db),
    /** RFC 8707 targets: the enabled resource servers named by these identifiers, by identifier. */
    async findTargets(resources: string[]): Promise<Map<string, ResourceTarget>> {
      const targets = await findResourceTargets(db, resources)
      return new Map(targets.map((t) => [t.resource, t]))
    },
    /** True when id names an enabled resource server whose secret matches (constant-time). */
    async authenticate(id: string, secret: string): Promise<boolean> {
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(id)) return false // not an id we issue; never reaches a query
      const stored = await secretHash(id)
      return (
        constantTimeEqual(stored ?? sha256('no such resource server'), sha256(secret)) && stored !== undefined
      )
    },
  }
}

export type ResourceServerService = ReturnType<typeof createResourceServerService>
