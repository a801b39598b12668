import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Passkeys (WebAuthn, issue 30). Expand only: new tables, new columns with defaults.
 *
 * - passkeys: one row per credential a user registered. credential_id is the authenticator's
 *   credential ID (base64url, unique across users: WebAuthn L3 §7.1 step 26 refuses a second
 *   registration of one ID), public_key its COSE key, sign_count the last signature counter seen,
 *   backup_eligible (BE) fixed at registration and backed_up (BS) as last seen (L3 §6.1.3).
 * - webauthn_challenges: the challenges handed out, by SHA-256, each bound to what it was issued for
 *   (purpose) and to the browser it was issued to (binding_hash: a hash of the pre-session or
 *   session), short-lived, deleted as they are used: any instance can check and spend one, once.
 * - users.password_sign_in: false once a user with a passkey turns password sign-in off.
 * - sign_in_sessions.reauthenticated_at: the last fresh password or passkey check in this session.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table passkeys (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references users (id) on delete cascade,
    credential_id text not null unique check (length(credential_id) between 16 and 1366),
    public_key bytea not null check (octet_length(public_key) <= 2048),
    sign_count bigint not null default 0 check (sign_count >= 0),
    transports text[] not null default '{}',
    backup_eligible boolean not null,
    backed_up boolean not null,
    name text not null check (length(name) between 1 and 64),
    created_at timestamptz not null default now(),
    last_used_at timestamptz
  )`.execute(db)
  await sql`create index passkeys_user_idx on passkeys (user_id, created_at)`.execute(db)

  await sql`create table webauthn_challenges (
    challenge_hash text primary key,
    purpose text not null check (purpose in ('sign_in', 'register', 'reauthenticate', 'reset')),
    binding_hash text not null,
    user_id uuid references users (id) on delete cascade,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`.execute(db)
  await sql`create index webauthn_challenges_expires_at_idx on webauthn_challenges (expires_at)`.execute(db)
  // Deleting a user cascades here: one index lookup per user.
  await sql`create index webauthn_challenges_user_id_idx on webauthn_challenges (user_id)
    where user_id is not null`.execute(db)

  await sql`alter table users add column password_sign_in boolean not null default true`.execute(db)
  await sql`alter table sign_in_sessions add column reauthenticated_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sign_in_sessions drop column reauthenticated_at`.execute(db)
  await sql`alter table users drop column password_sign_in`.execute(db)
  await sql`drop table webauthn_challenges`.execute(db)
  await sql`drop table passkeys`.execute(db)
}
