import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * What a client gets when it asks without `scope` (issue 38, RFC 6749 §3.3). Expand only: the column
 * is nullable, so a server of the previous version keeps working while this applies.
 *
 * - clients.default_scopes: the scopes an authorization request without `scope` gets; null: all of
 *   the client's scopes. Always among them (the check), never empty.
 * - A self-registered client's `scope` (its dynamic registration, its metadata document) is from now
 *   on its default, no longer its ceiling: the rows that exist keep their scopes as both, so nothing
 *   they hold changes (a metadata document read again takes the operator's ceiling then).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('default_scopes', sql`text[]`, (c) =>
      c.check(sql`default_scopes is null or (cardinality(default_scopes) >= 1 and default_scopes <@ scopes)`),
    )
    .execute()
  await sql`update clients set default_scopes = scopes where kind in ('dynamic', 'metadata_document')`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('default_scopes').execute()
}
