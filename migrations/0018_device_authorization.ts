import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The device authorization grant (RFC 8628, issue 39). Expand only: a new table, a new column with a
 * default.
 *
 * - device_authorizations: one row per device authorization request. The device code and the user
 *   code are stored as their SHA-256 only (device_code_hash unique: the token endpoint's poll is one
 *   lookup by it; user_code_hash unique: the /device page's lookup). status goes pending → approved
 *   or denied; family_id is set by the one poll that issues tokens (single use). last_polled_at and
 *   interval_seconds enforce the polling interval (slow_down adds 5 s). grant_id names the grant the
 *   person's consent created or widened.
 * - grants.device_authorized_at: the last time the person allowed the app on another device (the
 *   connected-apps page says so); null for a grant only ever given in this browser's redirect flow.
 * - clients.grant_types: the grant types a client may use (RFC 7591 §2); the device grant only where
 *   the operator or the client's registration named it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table device_authorizations (
    id uuid primary key,
    device_code_hash text not null unique,
    user_code_hash text not null unique,
    client_id text not null references clients (id) on delete cascade,
    scopes text[] not null,
    resources text[] not null default '{}',
    status text not null default 'pending' check (status in ('pending', 'approved', 'denied')),
    user_id uuid references users (id) on delete cascade,
    grant_id uuid references grants (id) on delete cascade,
    family_id uuid,
    interval_seconds integer not null check (interval_seconds between 1 and 3600),
    last_polled_at timestamptz,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db)
  await sql`create index device_authorizations_expires_at_idx on device_authorizations (expires_at)`.execute(
    db,
  )
  await sql`create index device_authorizations_user_id_idx on device_authorizations (user_id)
    where user_id is not null`.execute(db)
  await sql`create index device_authorizations_grant_id_idx on device_authorizations (grant_id)
    where grant_id is not null`.execute(db)
  await sql`create index device_authorizations_client_id_idx on device_authorizations (client_id)`.execute(db)
  await sql`alter table grants add column device_authorized_at timestamptz`.execute(db)
  await sql`alter table clients add column grant_types text[] not null
    default '{authorization_code,refresh_token}'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table clients drop column grant_types`.execute(db)
  await sql`alter table grants drop column device_authorized_at`.execute(db)
  await sql`drop table device_authorizations`.execute(db)
}
