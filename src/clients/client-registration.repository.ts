import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { type Client, type ClientMetadata, metadataColumns, toClient } from './client.repository.js'

/**
 * Clients that arrive without the operator: metadata-document clients (a row per client_id URL,
 * refreshed from the document) and dynamic registrations (RFC 7591/7592), and the operator's block list.
 */

export interface DocumentClientFields {
  id: string
  name: string
  redirectUris: string[]
  scopes: string[]
  /** What it states as its `scope`, within the operator's policy; null: all of `scopes`. */
  defaultScopes: string[] | null
  grantTypes: string[]
  metadata: ClientMetadata
  /** RFC 9126 §6: the document's require_pushed_authorization_requests. */
  requirePar: boolean
  fetchedAt: Date
  expiresAt: Date
}

/**
 * Writes what a metadata document says (insert at first sight, update after), in the caller's
 * transaction; the row as it was before (undefined at first sight) and as it is now. Never touches
 * disabled_at, nor a row of another kind (an operator's client cannot be overwritten by a document).
 */
export async function upsertDocumentClient(
  trx: Kysely<Database>,
  fields: DocumentClientFields,
): Promise<{ before: Client | undefined; client: Client | undefined }> {
  const beforeRow = await trx
    .selectFrom('clients')
    .selectAll()
    .where('id', '=', fields.id)
    .forUpdate()
    .executeTakeFirst()
  if (beforeRow && beforeRow.kind !== 'metadata_document')
    return { before: toClient(beforeRow), client: undefined }
  const columns = {
    name: fields.name,
    redirect_uris: fields.redirectUris,
    scopes: fields.scopes,
    default_scopes: fields.defaultScopes,
    grant_types: fields.grantTypes,
    document_fetched_at: fields.fetchedAt,
    document_expires_at: fields.expiresAt,
    require_par: fields.requirePar,
    ...metadataColumns(fields.metadata),
  }
  const row = beforeRow
    ? await trx
        .updateTable('clients')
        .set(columns)
        .where('id', '=', fields.id)
        .returningAll()
        .executeTakeFirstOrThrow()
    : await trx
        .insertInto('clients')
        .values({ id: fields.id, kind: 'metadata_document', ...columns })
        .returningAll()
        .executeTakeFirstOrThrow()
  return { before: beforeRow && toClient(beforeRow), client: toClient(row) }
}

export async function findBlockedClientId(
  db: Kysely<Database>,
  clientId: string,
): Promise<{ reason: string | null; blockedAt: Date } | undefined> {
  const row = await db
    .selectFrom('blocked_client_ids')
    .selectAll()
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  return row && { reason: row.reason, blockedAt: row.blocked_at }
}

/** Adds a client_id to the block list; false when it was already there. */
export async function insertBlockedClientId(
  trx: Kysely<Database>,
  clientId: string,
  reason: string | null,
  now: Date,
): Promise<boolean> {
  const rows = await trx
    .insertInto('blocked_client_ids')
    .values({ client_id: clientId, reason, blocked_at: now })
    .onConflict((oc) => oc.column('client_id').doNothing())
    .returning('client_id')
    .execute()
  return rows.length > 0
}

export async function deleteBlockedClientId(trx: Kysely<Database>, clientId: string): Promise<boolean> {
  const rows = await trx
    .deleteFrom('blocked_client_ids')
    .where('client_id', '=', clientId)
    .returning('client_id')
    .execute()
  return rows.length > 0
}

export async function listBlockedClientIds(db: Kysely<Database>) {
  const rows = await db
    .selectFrom('blocked_client_ids')
    .selectAll()
    .orderBy('blocked_at')
    .orderBy('client_id')
    .execute()
  return rows.map((row) => ({ clientId: row.client_id, reason: row.reason, blockedAt: row.blocked_at }))
}

/** A dynamic registration by its id and the hash of its registration access token (RFC 7592). */
export async function findDynamicClient(
  db: Kysely<Database>,
  id: string,
  tokenHash: string,
): Promise<Client | undefined> {
  const row = await db
    .selectFrom('clients')
    .selectAll()
    .where('id', '=', id)
    .where('kind', '=', 'dynamic')
    .where('registration_token_hash', '=', tokenHash)
    .executeTakeFirst()
  return row && toClient(row)
}

/**
 * Disables dynamic registrations about to be deleted, rows locked, in the caller's transaction: the
 * revocation feed's trigger announces each as client-disabled (one event per client, covering its
 * grants), and no consent or token can start for them meanwhile. The ids actually disabled.
 */
export async function disableDynamicClients(
  trx: Kysely<Database>,
  ids: readonly string[],
  now: Date,
): Promise<string[]> {
  if (ids.length === 0) return []
  const rows = await trx
    .updateTable('clients')
    .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.val(now)) }))
    .where('id', 'in', ids)
    .where('kind', '=', 'dynamic')
    .returning('id')
    .execute()
  return rows.map((row) => row.id)
}

/** Deletes dynamic registrations (what is left of their grants goes with them, by the foreign keys). */
export async function deleteDynamicClients(trx: Kysely<Database>, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0
  const rows = await trx
    .deleteFrom('clients')
    .where('id', 'in', ids)
    .where('kind', '=', 'dynamic')
    .returning('id')
    .execute()
  return rows.length
}

/** How many dynamic registrations never obtained a grant (the cap on open registration counts these). */
export async function countDynamicClientsWithoutGrant(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('clients as c')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('c.kind', '=', 'dynamic')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('grants as g')
            .select(sql`1`.as('one'))
            .whereRef('g.client_id', '=', 'c.id'),
        ),
      ),
    )
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * At most `limit` dynamic registrations created before `before` that are unused: no grant ever, or
 * none used (nor created) since `before`. Their rows are locked (others' locked rows skipped) for the
 * caller's transaction, which revokes and deletes them.
 */
export async function lockUnusedDynamicClients(
  trx: Kysely<Database>,
  before: Date,
  limit: number,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('clients as c')
    .select('c.id')
    .where('c.kind', '=', 'dynamic')
    .where('c.created_at', '<', before)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('grants as g')
            .select(sql`1`.as('one'))
            .whereRef('g.client_id', '=', 'c.id')
            .where((eb) =>
              eb.or([
                eb('g.last_used_at', '>=', before),
                eb('g.updated_at', '>=', before),
                eb('g.created_at', '>=', before),
              ]),
            ),
        ),
      ),
    )
    .orderBy('c.created_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
  return rows.map((row) => row.id)
}
