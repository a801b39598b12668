import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The revocation event feed (RFC 8417 SETs, RFC 8936 polling). Every revocation writes its event in
 * its own transaction through triggers, whichever code path revokes: revoking a grant or a refresh
 * family, deny-listing an access token, disabling a client, and deleting a user or a client (whose
 * grants go by cascade). A statement-level trigger then notifies the channel that wakes long polls.
 *
 * Events that another event already covers are not written: a family revoked with its grant, or a
 * grant revoked because its client was disabled (one client event instead of one per user).
 */
/** The three tables whose rows are revoked by setting a time, and that column. */
const REVOCABLE = [
  ['grants', 'revoked_at'],
  ['refresh_families', 'revoked_at'],
  ['clients', 'disabled_at'],
] as const

/**
 * Runs `fn` after `column` goes from null to a time (revoked, disabled), and after a row is deleted
 * while still live. The WHEN clauses keep every other update (last_used_at, …) free of the trigger.
 */
async function onRevokedOrDeleted(
  db: Kysely<any>,
  table: (typeof REVOCABLE)[number][0],
  column: string,
  fn: string,
): Promise<void> {
  const col = sql.id(column)
  await sql`create trigger ${sql.id(`${table}_revoked_event`)} after update of ${col} on ${sql.id(table)}
    for each row when (old.${col} is null and new.${col} is not null)
    execute function ${sql.id(fn)}()`.execute(db)
  await sql`create trigger ${sql.id(`${table}_deleted_event`)} after delete on ${sql.id(table)}
    for each row when (old.${col} is null)
    execute function ${sql.id(fn)}()`.execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  // The lifetime of grant, family and client events: ACCESS_TOKEN_TTL plus clock leeway. The server
  // writes its configuration here at start, because triggers cannot read the environment.
  await sql`create table revocation_event_settings (
    singleton boolean primary key default true check (singleton),
    access_token_ttl_seconds integer not null check (access_token_ttl_seconds > 0),
    leeway_seconds integer not null check (leeway_seconds >= 0)
  )`.execute(db)
  await sql`insert into revocation_event_settings (access_token_ttl_seconds, leeway_seconds) values (600, 60)`.execute(
    db,
  )

  // No foreign keys on the subject ids: an event outlives the grant or client it names.
  await sql`create table revocation_events (
    id uuid primary key default gen_random_uuid(),
    type text not null,
    grant_id uuid,
    family_id uuid,
    access_token_jti uuid,
    client_id text,
    created_at timestamptz not null,
    until timestamptz not null,
    constraint revocation_events_subject check (
      (type = 'grant-revoked' and grant_id is not null) or
      (type = 'family-revoked' and family_id is not null and grant_id is not null) or
      (type = 'access-token-revoked' and access_token_jti is not null) or
      (type = 'client-disabled' and client_id is not null)
    )
  )`.execute(db)
  await sql`create index revocation_events_until_idx on revocation_events (until)`.execute(db)

  await sql`create table event_streams (
    id uuid primary key default gen_random_uuid(),
    resource_server_id text not null references resource_servers (id) on delete cascade,
    created_at timestamptz not null,
    last_polled_at timestamptz not null
  )`.execute(db)
  await sql`create index event_streams_resource_server_id_idx on event_streams (resource_server_id)`.execute(
    db,
  )
  await sql`create index event_streams_last_polled_at_idx on event_streams (last_polled_at)`.execute(db)

  await sql`create table revocation_event_acks (
    stream_id uuid not null references event_streams (id) on delete cascade,
    event_id uuid not null references revocation_events (id) on delete cascade,
    primary key (stream_id, event_id)
  )`.execute(db)
  await sql`create index revocation_event_acks_event_id_idx on revocation_event_acks (event_id)`.execute(db)

  // The revocation time + the configured lifetime; a missing settings row must never make a revocation fail.
  await sql`create function revocation_event_until(revoked timestamptz) returns timestamptz
    language sql stable as $$
      select revoked + make_interval(secs => coalesce(
        (select access_token_ttl_seconds + leeway_seconds from revocation_event_settings), 660))
    $$`.execute(db)

  await sql`create function record_revocation_event(
      event_type text, event_grant_id uuid, event_family_id uuid, event_jti uuid, event_client_id text,
      revoked_at timestamptz, event_until timestamptz)
    returns void language sql as $$
      insert into revocation_events (type, grant_id, family_id, access_token_jti, client_id, created_at, until)
      values (event_type, event_grant_id, event_family_id, event_jti, event_client_id, revoked_at, event_until)
    $$`.execute(db)

  await sql`create function client_is_enabled(id text) returns boolean language sql stable as $$
      select exists (select 1 from clients c where c.id = client_is_enabled.id and c.disabled_at is null)
    $$`.execute(db)

  // Grants: revoked (user, operator, client disabled), or deleted while live (user or client deleted).
  // A delete has no application time, so the database's now() is the revocation time.
  await sql`create function grant_revocation_event() returns trigger language plpgsql as $$
    declare
      subject grants%rowtype;
      event_time timestamptz;
    begin
      if tg_op = 'DELETE' then
        subject := old;
        event_time := now();
      else
        subject := new;
        event_time := new.revoked_at;
      end if;
      -- A disabled or deleted client has its own event, which covers this grant.
      if client_is_enabled(subject.client_id) then
        perform record_revocation_event('grant-revoked', subject.id, null, null, null, event_time,
          revocation_event_until(event_time));
      end if;
      return null;
    end
  $$`.execute(db)
  await onRevokedOrDeleted(db, 'grants', 'revoked_at', 'grant_revocation_event')

  // Refresh families: revoked alone (reuse, code replay, RFC 7009), or deleted while their grant lives.
  await sql`create function family_revocation_event() returns trigger language plpgsql as $$
    declare
      subject refresh_families%rowtype;
      event_time timestamptz;
    begin
      if tg_op = 'DELETE' then
        subject := old;
        event_time := now();
      else
        subject := new;
        event_time := new.revoked_at;
      end if;
      -- Revoked with its grant (or its grant already gone): the grant's event covers it.
      if exists (select 1 from grants g where g.id = subject.grant_id and g.revoked_at is null)
         and client_is_enabled(subject.client_id) then
        perform record_revocation_event('family-revoked', subject.grant_id, subject.id, null, null, event_time,
          revocation_event_until(event_time));
      end if;
      return null;
    end
  $$`.execute(db)
  await onRevokedOrDeleted(db, 'refresh_families', 'revoked_at', 'family_revocation_event')

  // One access token (RFC 7009): kept until its own exp plus the leeway. ON CONFLICT DO NOTHING
  // inserts nothing the second time, so a repeated revocation writes no second event.
  await sql`create function access_token_revocation_event() returns trigger language plpgsql as $$
    begin
      perform record_revocation_event('access-token-revoked', null, null, new.jti, null, new.revoked_at,
        new.expires_at + make_interval(secs => coalesce(
          (select leeway_seconds from revocation_event_settings), 60)));
      return null;
    end
  $$`.execute(db)
  await sql`create trigger revoked_access_tokens_event after insert on revoked_access_tokens
    for each row execute function access_token_revocation_event()`.execute(db)

  // Clients: disabled by the operator, or deleted while enabled.
  await sql`create function client_revocation_event() returns trigger language plpgsql as $$
    declare
      event_time timestamptz := case when tg_op = 'DELETE' then now() else new.disabled_at end;
    begin
      perform record_revocation_event('client-disabled', null, null, null, old.id, event_time,
        revocation_event_until(event_time));
      return null;
    end
  $$`.execute(db)
  await onRevokedOrDeleted(db, 'clients', 'disabled_at', 'client_revocation_event')

  // Once per statement, delivered at commit (and collapsed per transaction): wakes the long polls.
  await sql`create function notify_revocation_events() returns trigger language plpgsql as $$
    begin
      perform pg_notify('linkauth_revocation_events', '');
      return null;
    end
  $$`.execute(db)
  await sql`create trigger revocation_events_notify after insert on revocation_events
    for each statement execute function notify_revocation_events()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of REVOCABLE) {
    await sql`drop trigger if exists ${sql.id(`${table}_revoked_event`)} on ${sql.id(table)}`.execute(db)
    await sql`drop trigger if exists ${sql.id(`${table}_deleted_event`)} on ${sql.id(table)}`.execute(db)
  }
  await sql`drop trigger if exists revoked_access_tokens_event on revoked_access_tokens`.execute(db)
  for (const table of [
    'revocation_event_acks',
    'event_streams',
    'revocation_events',
    'revocation_event_settings',
  ]) {
    await db.schema.dropTable(table).ifExists().cascade().execute()
  }
  for (const fn of [
    'grant_revocation_event()',
    'family_revocation_event()',
    'access_token_revocation_event()',
    'client_revocation_event()',
    'notify_revocation_events()',
    'record_revocation_event(text, uuid, uuid, uuid, text, timestamptz, timestamptz)',
    'revocation_event_until(timestamptz)',
    'client_is_enabled(text)',
  ]) {
    await sql.raw(`drop function if exists ${fn}`).execute(db)
  }
}
