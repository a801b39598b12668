import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Pushed authorization requests (RFC 9126, issue 39). Expand only: a new table, a new column with a default.
 *
 * - pushed_authorization_requests: one row per request_uri handed out, by the SHA-256 of its random
 *   handle (the request_uri itself is never stored), bound to the client that pushed it, holding the
 *   validated authorization parameters; short-lived, deleted as it is used (single use), expired rows
 *   deleted by housekeeping.
 * - clients.require_par: this client's authorization requests must be pushed (RFC 9126 §6
 *   require_pushed_authorization_requests); a plain one is refused.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table pushed_authorization_requests (
    handle_hash text primary key,
    client_id text not null references clients (id) on delete cascade,
    parameters jsonb not null,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db)
  await sql`create index pushed_authorization_requests_expires_at_idx
    on pushed_authorization_requests (expires_at)`.execute(db)
  // Deleting a client cascades here: one index lookup per client.
  await sql`create index pushed_authorization_requests_client_id_idx
    on pushed_authorization_requests (client_id)`.execute(db)
  await sql`alter table clients add column require_par boolean not null default false`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table clients drop column require_par`.execute(db)
  await sql`drop table pushed_authorization_requests`.execute(db)
}
