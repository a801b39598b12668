import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Applications that arrive without the operator (issue 27). Expand only: the new columns have
 * defaults or are nullable, so a server of the previous version keeps working while this applies.
 *
 * - clients.id may now also be an https URL of at most 128 printable characters: the client_id of a
 *   Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document), which names the
 *   document it was read from. 128: what the audit trail's client_id column holds.
 * - clients.kind: 'registered' (by the operator), 'metadata_document' or 'dynamic' (RFC 7591).
 * - clients.document_fetched_at / document_expires_at: when a metadata document was read and until
 *   when it is fresh (its HTTP caching, within the operator's bounds).
 * - clients.registration_token_hash: the SHA-256 of a dynamic registration's access token (RFC 7592).
 * - blocked_client_ids: client_id URLs the operator blocked, seen or not: a document never unblocks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table clients drop constraint clients_id_check`.execute(db)
  await sql`alter table clients add constraint clients_id_check check (
    id ~ '^[A-Za-z0-9_-]{8,64}$' or (id ~ '^https://[!-~]+$' and length(id) <= 128))`.execute(db)
  await db.schema
    .alterTable('clients')
    .addColumn('kind', 'text', (c) =>
      c
        .notNull()
        .defaultTo('registered')
        .check(sql`kind in ('registered', 'metadata_document', 'dynamic')`),
    )
    .addColumn('document_fetched_at', 'timestamptz')
    .addColumn('document_expires_at', 'timestamptz')
    .addColumn('registration_token_hash', 'text')
    .execute()
  await sql`create index clients_dynamic_created_idx on clients (created_at) where kind = 'dynamic'`.execute(
    db,
  )
  await db.schema
    .createTable('blocked_client_ids')
    .addColumn('client_id', 'text', (c) => c.primaryKey().check(sql`length(client_id) <= 128`))
    .addColumn('reason', 'text', (c) => c.check(sql`length(reason) <= 300`))
    .addColumn('blocked_at', 'timestamptz', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('blocked_client_ids').execute()
  await sql`drop index clients_dynamic_created_idx`.execute(db)
  await db.schema
    .alterTable('clients')
    .dropColumn('registration_token_hash')
    .dropColumn('document_expires_at')
    .dropColumn('document_fetched_at')
    .dropColumn('kind')
    .execute()
  await sql`delete from clients where id !~ '^[A-Za-z0-9_-]{8,64}$'`.execute(db)
  await sql`alter table clients drop constraint clients_id_check`.execute(db)
  await sql`alter table clients add constraint clients_id_check check (id ~ '^[A-Za-z0-9_-]{8,64}$')`.execute(
    db,
  )
}
