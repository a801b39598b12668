import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export interface ResourceServer {
  id: string
  name: string
  createdAt: Date
}

export async function insertResourceServer(
  db: Kysely<Database>,
  server: { id: string; name: string; secretHash: string },
): Promise<ResourceServer> {
  const row = await db
    .insertInto('resource_servers')
    .values({ id: server.id, name: server.name, secret_hash: server.secretHash })
    .returning(['id', 'name', 'created_at'])
    .executeTakeFirstOrThrow()
  return { id: row.id, name: row.name, createdAt: row.created_at }
}

/** The stored secret hash of an enabled resource server, for authenticating its calls. */
export async function findResourceServerSecretHash(
  db: Kysely<Database>,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('resource_servers')
    .select('secret_hash')
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .executeTakeFirst()
  return row?.secret_hash
}

export async function listResourceServers(db: Kysely<Database>): Promise<ResourceServer[]> {
  const rows = await db
    .selectFrom('resource_servers')
    .select(['id', 'name', 'created_at'])
    .orderBy('created_at')
    .execute()
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }))
}
