import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Signing keys get a life of their own (src/tokens/signing-key.service.ts, docs/operating.md):
 *
 * - `pending`, `activates_at`: a key made ahead of its use by the rotation schedule waits, published
 *   in the JWKS, until `activates_at`; once active, `activates_at` says since when it signs. A waiting
 *   key also has `retired_at` = `activates_at`: versions before this migration read `retired_at` only,
 *   so they publish it (a key retired after their cut-off) and never sign with it, and the unique
 *   index "one key with retired_at null" keeps meaning "the active key".
 * - `revoked_at`: removed in an emergency (a leaked key): never published, never verifies again.
 * - `kek_id`: which key-encryption key encrypted the private half (an HMAC of a fixed label under
 *   it, never the key itself), so that KEY_ENCRYPTION_KEY can be changed while the service runs.
 *
 * The revocation feed announces a key's removal: revocation_events gets the kid. Its subject check
 * becomes one check per event type, none of them listing the types, so that each migration adding
 * a type adds its own check rather than rewriting a shared one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table signing_keys
    add column pending boolean not null default false,
    add column activates_at timestamptz,
    add column revoked_at timestamptz,
    add column kek_id text`.execute(db)
  await sql`create index signing_keys_pending_idx on signing_keys (activates_at) where pending`.execute(db)

  await sql`alter table revocation_events add column kid text`.execute(db)
  await sql`alter table revocation_events drop constraint if exists revocation_events_subject`.execute(db)
  const subjects = [
    ['grant', sql`type <> 'grant-revoked' or grant_id is not null`],
    ['family', sql`type <> 'family-revoked' or (family_id is not null and grant_id is not null)`],
    ['access_token', sql`type <> 'access-token-revoked' or access_token_jti is not null`],
    ['client', sql`type <> 'client-disabled' or client_id is not null`],
    ['key', sql`type <> 'key-revoked' or kid is not null`],
  ] as const
  for (const [name, check] of subjects)
    await sql`alter table revocation_events add constraint ${sql.id(`revocation_events_${name}_subject`)} check (${check})`.execute(
      db,
    )

  // A revoked key's event, written in the revoking transaction like every other revocation (0003):
  // it lives as long as a token the key signed could (the access-token lifetime plus leeway).
  await sql`create function signing_key_revocation_event() returns trigger language plpgsql as $$
    begin
      insert into revocation_events (type, kid, created_at, until)
      values ('key-revoked', new.kid, new.revoked_at, revocation_event_until(new.revoked_at));
      return null;
    end
  $$`.execute(db)
  await sql`create trigger signing_keys_revoked_event after update of revoked_at on signing_keys
    for each row when (old.revoked_at is null and new.revoked_at is not null)
    execute function signing_key_revocation_event()`.execute(db)

  // Every change of the key set, by any version, tells every instance to read it again (at commit).
  await sql`create function notify_signing_keys() returns trigger language plpgsql as $$
    begin
      perform pg_notify('linkauth_signing_keys', '');
      return null;
    end
  $$`.execute(db)
  await sql`create trigger signing_keys_notify after insert or update or delete on signing_keys
    for each statement execute function notify_signing_keys()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists signing_keys_notify on signing_keys`.execute(db)
  await sql`drop trigger if exists signing_keys_revoked_event on signing_keys`.execute(db)
  await sql`drop function if exists notify_signing_keys()`.execute(db)
  await sql`drop function if exists signing_key_revocation_event()`.execute(db)
  await sql`delete from revocation_events where type = 'key-revoked'`.execute(db)
  for (const name of ['grant', 'family', 'access_token', 'client', 'key'])
    await sql`alter table revocation_events drop constraint if exists ${sql.id(`revocation_events_${name}_subject`)}`.execute(
      db,
    )
  await sql`alter table revocation_events add constraint revocation_events_subject check (
      (type = 'grant-revoked' and grant_id is not null) or
      (type = 'family-revoked' and family_id is not null and grant_id is not null) or
      (type = 'access-token-revoked' and access_token_jti is not null) or
      (type = 'client-disabled' and client_id is not null)
    )`.execute(db)
  await sql`alter table revocation_events drop column kid`.execute(db)
  await sql`drop index if exists signing_keys_pending_idx`.execute(db)
  await sql`alter table signing_keys drop column pending, drop column activates_at,
    drop column revoked_at, drop column kek_id`.execute(db)
}
