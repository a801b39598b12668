import { type Kysely, sql } from 'kysely'
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

/** A registered API a token may be issued for (RFC 8707): its identifier and the scopes it serves. */
export interface ResourceTarget {
  id: string
  name: string
  resource: string
  scopes: string[]
}

/** The enabled resource servers whose resource identifier is exactly one of `resources`. */
export async function findResourceTargets(
  db: Kysely<Database>,
  resources: string[],
): Promise<ResourceTarget[]> {
  const rows = await db
    .selectFrom('resource_servers')
    .select(['id', 'name', 'resource', 'scopes'])
    .where(sql<boolean>`resource = any(${resources}::text[])`)
    .where('disabled_at', 'is', null)
    .execute()
  return rows.map((r) => ({ id: r.id, name: r.name, resource: r.resource!, scopes: r.scopes }))
}
