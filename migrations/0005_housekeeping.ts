import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Housekeeping (src/housekeeping/) deletes expired rows in small batches. Each batch picks its rows
 * through an index in the order of the column that ends them, so that no delete reads a whole table:
 * these are the indexes that were missing. See docs/operating.md "Housekeeping".
 *
 * authorization_codes.family_id is indexed for the foreign key's ON DELETE SET NULL: without it,
 * every deleted refresh family would read the whole code table. A code that started a family is kept
 * while the family lives (a replay of the code revokes it), so the codes housekeeping may delete are
 * those with no family: their own partial index replaces the plain expires_at one.
 *
 * A refresh family deleted long after it expired is no revocation: the family-revoked event its
 * deletion used to write would cover no access token that can still be valid (its tokens were all
 * issued before the family expired, and an event lives exactly an access token's lifetime plus
 * leeway). The trigger function now skips those, so resource servers are not sent one event per
 * expired family.
 */
const INDEXES = [
  ['sign_in_sessions_expires_at_idx', sql`sign_in_sessions (expires_at)`],
  ['revoked_access_tokens_expires_at_idx', sql`revoked_access_tokens (expires_at)`],
  ['refresh_families_expires_at_idx', sql`refresh_families (expires_at)`],
  ['refresh_families_revoked_at_idx', sql`refresh_families (revoked_at) where revoked_at is not null`],
  ['authorization_codes_family_id_idx', sql`authorization_codes (family_id) where family_id is not null`],
  [
    'authorization_codes_unbound_expires_at_idx',
    sql`authorization_codes (expires_at) where family_id is null`,
  ],
] as const

/** The body of family_revocation_event() as migration 0003 wrote it, with `guard` in front. */
const familyRevocationEvent = (guard: string) =>
  sql.raw(`create or replace function family_revocation_event() returns trigger language plpgsql as $$
    begin
      ${guard}
      -- Revoked or deleted with its grant, user or client: their event covers it (a user's deletion
      -- may reach the family before the grant, so the user is asked too).
      if exists (select 1 from grants g where g.id = old.grant_id and g.revoked_at is null)
         and exists (select 1 from users u where u.id = old.user_id)
         and client_is_enabled(old.client_id) then
        perform record_revocation_event('family-revoked', old.grant_id, old.id, null, null,
          case when tg_op = 'DELETE' then now() else new.revoked_at end);
      end if;
      return null;
    end
  $$`)

export async function up(db: Kysely<any>): Promise<void> {
  // Building these reads every row of their tables: on a large database that outlasts the pool's
  // 10 s statement timeout, which would fail the upgrade. It holds for this transaction only.
  await sql`set local statement_timeout = 0`.execute(db)
  // An operator may have built them beforehand with CREATE INDEX CONCURRENTLY (docs/operating.md).
  for (const [name, on] of INDEXES) await sql`create index if not exists ${sql.id(name)} on ${on}`.execute(db)
  await sql`drop index if exists authorization_codes_expires_at_idx`.execute(db)
  await familyRevocationEvent(`-- Expired so long ago that no access token of it can still be valid: no revocation.
      if tg_op = 'DELETE' and revocation_event_until(old.expires_at) <= now() then
        return null;
      end if;`).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await familyRevocationEvent('').execute(db)
  await sql`create index authorization_codes_expires_at_idx on authorization_codes (expires_at)`.execute(db)
  for (const [name] of INDEXES) await sql`drop index ${sql.id(name)}`.execute(db)
}
