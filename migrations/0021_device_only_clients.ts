import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * A client that uses only the device grant (RFC 8628, issue 39: a command-line tool) has nowhere to
 * be redirected to, so it may have no redirect URI (RFC 7591 §2: redirect_uris is for redirect-based
 * flows). Relaxes the check only: every row that exists keeps satisfying it, and a server of the
 * previous version, which never writes an empty list, keeps working while this applies.
 *
 * - clients.redirect_uris: at most 10 as before; none only when the client may not use the code grant.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table clients drop constraint clients_redirect_uris_check`.execute(db)
  await sql`alter table clients add constraint clients_redirect_uris_check check (
    cardinality(redirect_uris) <= 10
    and (cardinality(redirect_uris) >= 1 or not ('authorization_code' = any(grant_types)))
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from clients where cardinality(redirect_uris) = 0`.execute(db)
  await sql`alter table clients drop constraint clients_redirect_uris_check`.execute(db)
  await sql`alter table clients add constraint clients_redirect_uris_check
    check (cardinality(redirect_uris) between 1 and 10)`.execute(db)
}
