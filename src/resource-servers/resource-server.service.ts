import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Database } from '../db/database.js'
import { constantTimeEqual, randomToken, sha256 } from '../lib/secrets.js'
import {
  findResourceServerSecretHash,
  insertResourceServer,
  listResourceServers,
  type ResourceServer,
} from './resource-server.repository.js'

export const newResourceServerSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
})

export function createResourceServerService(db: Kysely<Database>) {
  return {
    /**
     * Registers a resource server. The secret (256 random bits) is returned once and stored only as
     * its SHA-256: with that much entropy a slow hash adds nothing, and introspection stays fast.
     */
    async createResourceServer(
      input: z.output<typeof newResourceServerSchema>,
    ): Promise<ResourceServer & { secret: string }> {
      const secret = randomToken(32)
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(12)}`,
        name: input.name,
        secretHash: sha256(secret),
      })
      return { ...server, secret }
    },
    listResourceServers: () => listResourceServers(db),
    /** True when id names an enabled resource server whose secret matches (constant-time). */
    async authenticate(id: string, secret: string): Promise<boolean> {
      const stored = await findResourceServerSecretHash(db, id)
      return (
        constantTimeEqual(stored ?? sha256('no such resource server'), sha256(secret)) && stored !== undefined
      )
    },
  }
}

export type ResourceServerService = ReturnType<typeof createResourceServerService>
