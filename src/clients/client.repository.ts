import type { Kysely } from 'kysely'
import type { Database, Row } from '../db/database.js'

export interface Client {
  id: string
  name: string
  redirectUris: string[]
  scopes: string[]
  createdAt: Date
  disabledAt: Date | null
}

export function toClient(row: Row<'clients'>): Client {
  return {
    id: row.id,
    name: row.name,
    redirectUris: row.redirect_uris,
    scopes: row.scopes,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
  }
}

export async function insertClient(
  db: Kysely<Database>,
  client: { id: string; name: string; redirectUris: string[]; scopes: string[] },
): Promise<Client> {
  const row = await db
    .insertInto('clients')
    .values({ id: client.id, name: client.name, redirect_uris: client.redirectUris, scopes: client.scopes })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toClient(row)
}

export async function findClientById(db: Kysely<Database>, id: string): Promise<Client | undefined> {
  const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst()
  return row && toClient(row)
}

export async function listClients(db: Kysely<Database>): Promise<Client[]> {
  const rows = await db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute()
  return rows.map(toClient)
}

/** Marks a client disabled; returns it, or undefined when there is no such client. Idempotent. */
export async function disableClient(
  db: Kysely<Database>,
  id: string,
  now: Date,
): Promise<Client | undefined> {
  const row = await db
    .updateTable('clients')
    .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.val(now)) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && toClient(row)
}

/** The redirect URIs of every enabled client, by client id (the CORS origins are made from them). */
export async function listEnabledRedirectUris(
  db: Kysely<Database>,
): Promise<{ id: string; redirectUris: string[] }[]> {
  const rows = await db
    .selectFrom('clients')
    .select(['id', 'redirect_uris'])
    .where('disabled_at', 'is', null)
    .execute()
  return rows.map((row) => ({ id: row.id, redirectUris: row.redirect_uris }))
}
