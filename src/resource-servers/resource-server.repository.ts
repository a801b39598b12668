import type { Kysely, Selectable } from 'kysely'
import type { Database, ResourceServersTable } from '../db/database.js'

export interface ResourceServer {
  id: string
  name: string
  /** The API's resource identifier (RFC 8707); null for one registered before, on the default audience. */
  resource: string | null
  scopes: string[]
  createdAt: Date
}

/** An enabled resource server that a client may name as `resource` (RFC 8707 §2). */
export interface ResourceTarget {
  id: string
  name: string
  resource: string
  scopes: string[]
}

/** What authenticating a resource server's call needs, kept in memory by the service. */
export interface ResourceServerCredentials {
  secretHash: string
  resource: string | null
}

const COLUMNS = ['id', 'name', 'resource', 'scopes', 'created_at'] as const

function toResourceServer(
  row: Pick<Selectable<ResourceServersTable>, (typeof COLUMNS)[number]>,
): ResourceServer {
  return { id: row.id, name: row.name, resource: row.resource, scopes: row.scopes, createdAt: row.created_at }
}

/** Throws the unique violation (23505) when another resource server has this resource. */
export async function insertResourceServer(
  db: Kysely<Database>,
  server: { id: string; name: string; secretHash: string; resource?: string | null; scopes?: string[] },
): Promise<ResourceServer> {
  const row = await db
    .insertInto('resource_servers')
    .values({
      id: server.id,
      name: server.name,
      secret_hash: server.secretHash,
      resource: server.resource ?? null,
      scopes: server.scopes ?? [],
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()
  return toResourceServer(row)
}

/** The stored secret hash and resource of an enabled resource server, for authenticating its calls. */
export async function findResourceServerCredentials(
  db: Kysely<Database>,
  id: string,
): Promise<ResourceServerCredentials | undefined> {
  const row = await db
    .selectFrom('resource_servers')
    .select(['secret_hash', 'resource'])
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .executeTakeFirst()
  return row && { secretHash: row.secret_hash, resource: row.resource }
}

/** The enabled resource servers whose resource is exactly one of these strings, in one statement. */
export async function findResourceTargets(
  db: Kysely<Database>,
  resources: string[],
): Promise<ResourceTarget[]> {
  const rows = await db
    .selectFrom('resource_servers')
    .select(['id', 'name', 'resource', 'scopes'])
    .where((eb) => eb('resource', '=', eb.fn.any(eb.val(resources))))
    .where('disabled_at', 'is', null)
    .execute()
  return rows.map((r) => ({ id: r.id, name: r.name, resource: r.resource!, scopes: r.scopes }))
}

/** The resource identifiers of the enabled resource servers that have one, in registration order. */
export async function listEnabledResources(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('resource_servers')
    .select('resource')
    .where('resource', 'is not', null)
    .where('disabled_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map((r) => r.resource!)
}

export async function listResourceServers(db: Kysely<Database>): Promise<ResourceServer[]> {
  const rows = await db.selectFrom('resource_servers').select(COLUMNS).orderBy('created_at').execute()
  return rows.map(toResourceServer)
}
