import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * DPoP, sender-constrained tokens (RFC 9449, issue 17). Expand only: every new column is nullable or
 * has a default, so a server of the previous version keeps working while this applies, and rows
 * written before it mean what they meant (not bound to any key, DPoP optional).
 *
 * - clients.require_dpop: the client must send a DPoP proof with every token request (the RFC 9449
 *   §5.2 `dpop_bound_access_tokens` metadata, as an operator's flag).
 * - pending_authorizations.dpop_jkt, authorization_codes.dpop_jkt: the key thumbprint of the
 *   authorization request's `dpop_jkt` (§10), carried from the request to its code; the token request
 *   must then prove possession of that key.
 * - refresh_families.dpop_jkt: the key a family's refresh tokens are bound to (§5); null: unbound.
 * - dpop_proof_jtis: the proofs already seen (§11.1), by the SHA-256 of key thumbprint and jti, kept
 *   until the proof could no longer be accepted anyway; housekeeping deletes expired rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('require_dpop', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute()
  for (const table of ['pending_authorizations', 'authorization_codes', 'refresh_families']) {
    await db.schema
      .alterTable(table)
      .addColumn('dpop_jkt', 'text', (c) => c.check(sql`length(dpop_jkt) between 1 and 128`))
      .execute()
  }
  await db.schema
    .createTable('dpop_proof_jtis')
    .ifNotExists()
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`create index if not exists dpop_proof_jtis_expires_at_idx on dpop_proof_jtis (expires_at)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dpop_proof_jtis').ifExists().execute()
  for (const table of ['refresh_families', 'authorization_codes', 'pending_authorizations']) {
    await db.schema.alterTable(table).dropColumn('dpop_jkt').execute()
  }
  await db.schema.alterTable('clients').dropColumn('require_dpop').execute()
}
