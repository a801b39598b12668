import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The audit trail and one-time password-reset links (issue 18). Expand only: new tables and indexes.
 *
 * - audit_events: append-only. A trigger refuses every UPDATE (and TRUNCATE): the only way a row
 *   leaves is a DELETE, which the server does only for rows older than AUDIT_RETENTION
 *   (housekeeping). user_id and client_id name the user and the application an event concerns, with
 *   no foreign key, so that a deleted user's or client's history stays readable; each has an index
 *   in the order the API reads (newest first), as do the time and the event type.
 * - password_reset_tokens: the SHA-256 of a link's token (the link itself is never stored), its
 *   user, and when it expires and was used.
 * - users (lower(email) text_pattern_ops): the admin list's email-prefix search goes through an
 *   index whatever the database's collation.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table audit_events (
    id bigint generated always as identity primary key,
    occurred_at timestamptz not null,
    event_type text not null check (length(event_type) between 1 and 64),
    actor_kind text not null
      check (actor_kind in ('user', 'client', 'resource_server', 'operator', 'system', 'anonymous')),
    actor_id text check (length(actor_id) <= 128),
    target_kind text check (length(target_kind) <= 32),
    target_id text check (length(target_id) <= 128),
    user_id uuid,
    client_id text check (length(client_id) <= 128),
    client_address text check (length(client_address) <= 64),
    user_agent text check (length(user_agent) <= 256),
    request_id text check (length(request_id) <= 64),
    details jsonb not null default '{}'::jsonb check (pg_column_size(details) <= 4096)
  )`.execute(db)
  await sql`create index audit_events_occurred_at_idx on audit_events (occurred_at desc, id desc)`.execute(db)
  await sql`create index audit_events_user_idx on audit_events (user_id, occurred_at desc, id desc)
    where user_id is not null`.execute(db)
  await sql`create index audit_events_client_idx on audit_events (client_id, occurred_at desc, id desc)
    where client_id is not null`.execute(db)
  await sql`create index audit_events_type_idx on audit_events (event_type, occurred_at desc, id desc)`.execute(
    db,
  )
  await sql`create function audit_events_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'audit_events is append-only: % is not allowed', tg_op
        using errcode = 'insufficient_privilege';
    end
  $$`.execute(db)
  await sql`create trigger audit_events_no_update before update on audit_events
    for each row execute function audit_events_append_only()`.execute(db)
  await sql`create trigger audit_events_no_truncate before truncate on audit_events
    for each statement execute function audit_events_append_only()`.execute(db)

  await sql`create table password_reset_tokens (
    token_hash text primary key,
    user_id uuid not null references users (id) on delete cascade,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    used_at timestamptz
  )`.execute(db)
  await sql`create index password_reset_tokens_user_id_idx on password_reset_tokens (user_id)`.execute(db)
  await sql`create index password_reset_tokens_expires_at_idx on password_reset_tokens (expires_at)`.execute(
    db,
  )

  await sql`create index if not exists users_email_prefix_idx on users (lower(email) text_pattern_ops)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists users_email_prefix_idx`.execute(db)
  await sql`drop table password_reset_tokens`.execute(db)
  await sql`drop table audit_events`.execute(db)
  await sql`drop function audit_events_append_only()`.execute(db)
}
