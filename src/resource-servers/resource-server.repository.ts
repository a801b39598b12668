import { type Kysely, type Selectable } from 'kysely'
import type { Database, ResourceServersTable } from '../db/database.js'

export interface ResourceServer {
  id: string
  name: string
  /** The API's resource identifier (RFC 8707); null for one registered before, on the default audience. */
  resource: string | null
  scopes: string[]
  createdAt: Date
  disabledAt: Date | null
  /** Until when the secret a rotation replaced is still accepted; null: only the current one is. */
  previousSecretExpiresAt: Date | null
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
  /** The secret a rotation replaced, and until when it is accepted (the overlap); null: none. */
  previousSecretHash: string | null
  previousSecretExpiresAt: Date | null
  resource: string | null
}

const COLUMNS = [
  'id',
  'name',
  'resource',
  'scopes',
  'created_at',
  'disabled_at',
  'previous_secret_expires_at',
] as const

function toResourceServer(
  row: Pick<Selectable<ResourceServersTable>, (typeof COLUMNS)[number]>,
): ResourceServer {
  return {
    id: row.id,
    name: row.name,
    resource: row.resource,
    scopes: row.scopes,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    previousSecretExpiresAt: row.previous_secret_expires_at,
  }
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

/** The stored secret hashes and resource of an enabled resource server, for authenticating its calls. */
export async function findResourceServerCredentials(
  db: Kysely<Database>,
  id: string,
): Promise<ResourceServerCredentials | undefined> {
  const row = await db
    .selectFrom('resource_servers')
    .select(['secret_hash', 'previous_secret_hash', 'previous_secret_expires_at', 'resource'])
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .executeTakeFirst()
  return (
    row && {
      secretHash: row.secret_hash,
      previousSecretHash: row.previous_secret_hash,
      previousSecretExpiresAt: row.previous_secret_expires_at,
      resource: row.resource,
    }
  )
}

export async function findResourceServer(
  db: Kysely<Database>,
  id: string,
): Promise<ResourceServer | undefined> {
  const row = await db.selectFrom('resource_servers').select(COLUMNS).where('id', '=', id).executeTakeFirst()
  return row && toResourceServer(row)
}

/** The row, locked until the caller's transaction ends (a change reads what it changes from). */
export async function lockResourceServer(
  trx: Kysely<Database>,
  id: string,
): Promise<ResourceServer | undefined> {
  const row = await trx
    .selectFrom('resource_servers')
    .select(COLUMNS)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
  return row && toResourceServer(row)
}

/** Writes the given fields (the others stay); the server as it now is, or undefined when there is none. */
export async function updateResourceServer(
  db: Kysely<Database>,
  id: string,
  fields: { name?: string | undefined; scopes?: string[] | undefined },
): Promise<ResourceServer | undefined> {
  const row = await db
    .updateTable('resource_servers')
    .set({
      ...(fields.name !== undefined ? { name: fields.name } : {}),
      ...(fields.scopes !== undefined ? { scopes: fields.scopes } : {}),
    })
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row && toResourceServer(row)
}

/** Sets or clears disabled_at (keeping the first time when disabled twice); undefined when there is none. */
export async function setResourceServerDisabled(
  db: Kysely<Database>,
  id: string,
  disabledAt: Date | null,
): Promise<ResourceServer | undefined> {
  const row = await db
    .updateTable('resource_servers')
    .set((eb) => ({
      disabled_at: disabledAt === null ? null : eb.fn.coalesce('disabled_at', eb.val(disabledAt)),
    }))
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row && toResourceServer(row)
}

/**
 * Replaces the secret's hash. With an overlap end, the replaced hash stays accepted until then (a
 * previous one still inside its own overlap is dropped: one old secret at a time); without one, the
 * old secret stops at once.
 */
export async function replaceResourceServerSecret(
  db: Kysely<Database>,
  id: string,
  secretHash: string,
  previousUntil: Date | null,
): Promise<ResourceServer | undefined> {
  const row = await db
    .updateTable('resource_servers')
    .set((eb) => ({
      secret_hash: secretHash,
      previous_secret_hash: previousUntil === null ? null : eb.ref('secret_hash'),
      previous_secret_expires_at: previousUntil,
    }))
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row && toResourceServer(row)
}

/** Deletes a resource server (its event streams go by cascade); what it was, or undefined. */
export async function deleteResourceServer(
  db: Kysely<Database>,
  id: string,
): Promise<ResourceServer | undefined> {
  const row = await db
    .deleteFrom('resource_servers')
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirst()
  return row && toResourceServer(row)
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
