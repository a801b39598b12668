import { type Kysely, sql } from 'kysely'
import type { Database, RevocationEventType, Row } from '../db/database.js'

/** A revocation as the triggers of migration 0003 recorded it. */
export interface RevocationEvent {
  id: string
  type: RevocationEventType
  grantId: string | null
  familyId: string | null
  jti: string | null
  clientId: string | null
  createdAt: Date
  /** After this no access token the event covers can still be valid. */
  until: Date
}

function toRevocationEvent(row: Row<'revocation_events'>): RevocationEvent {
  return {
    id: row.id,
    type: row.type,
    grantId: row.grant_id,
    familyId: row.family_id,
    jti: row.access_token_jti,
    clientId: row.client_id,
    createdAt: row.created_at,
    until: row.until,
  }
}

export async function insertEventStream(
  db: Kysely<Database>,
  resourceServerId: string,
  now: Date,
): Promise<string> {
  const row = await db
    .insertInto('event_streams')
    .values({ resource_server_id: resourceServerId, created_at: now, last_polled_at: now })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/**
 * Checks that the resource server has this stream, not idle since `idleSince`, and records the poll.
 * False when there is no such stream (or it idled out): the caller must start a new one. The write
 * happens only when the last recorded poll is older than `touchBefore`, so that a stream polled
 * again and again costs a read, not a commit, per poll.
 */
export async function touchEventStream(
  db: Kysely<Database>,
  stream: { id: string; resourceServerId: string; now: Date; idleSince: Date; touchBefore: Date },
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with live as (
      select id, last_polled_at from event_streams
       where id = ${stream.id} and resource_server_id = ${stream.resourceServerId}
         and last_polled_at > ${stream.idleSince}
    ), touched as (
      update event_streams as s set last_polled_at = ${stream.now}
        from live
       where s.id = live.id and live.last_polled_at < ${stream.touchBefore}
    )
    select id from live
  `.execute(db)
  return rows.length > 0
}

/** Records events as received by the stream; ids of no (or no longer a) event are ignored. */
export async function acknowledgeEvents(
  db: Kysely<Database>,
  streamId: string,
  eventIds: readonly string[],
): Promise<void> {
  if (eventIds.length === 0) return
  await sql`
    insert into revocation_event_acks (stream_id, event_id)
    select ${streamId}::uuid, e.id from revocation_events e where e.id = any(${eventIds}::uuid[])
    on conflict do nothing
  `.execute(db)
}

/**
 * For each stream, its events not acknowledged yet and still relevant at `now`, oldest first, at most
 * `limit` each: one statement however many streams (a wake-up of every held poll is one query).
 */
export async function findPendingEvents(
  db: Kysely<Database>,
  streamIds: readonly string[],
  now: Date,
  limit: number,
): Promise<Map<string, RevocationEvent[]>> {
  const pending = new Map<string, RevocationEvent[]>()
  if (streamIds.length === 0) return pending
  const { rows } = await sql<Row<'revocation_events'> & { stream_id: string }>`
    select s.stream_id, e.*
      from unnest(${streamIds}::uuid[]) as s (stream_id)
      cross join lateral (
        select * from revocation_events as r
         where r.until > ${now}
           and not exists (
             select 1 from revocation_event_acks as a where a.stream_id = s.stream_id and a.event_id = r.id)
         order by r.created_at, r.id
         limit ${limit}
      ) as e
     order by s.stream_id, e.created_at, e.id
  `.execute(db)
  for (const row of rows) {
    const list = pending.get(row.stream_id) ?? []
    list.push(toRevocationEvent(row))
    pending.set(row.stream_id, list)
  }
  return pending
}

/** Deletes events no token can need any more (their acknowledgements go with them). */
export async function deleteExpiredEvents(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('revocation_events').where('until', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Deletes streams not polled since `idleSince` (their acknowledgements go with them). */
export async function deleteIdleEventStreams(db: Kysely<Database>, idleSince: Date): Promise<number> {
  const result = await db
    .deleteFrom('event_streams')
    .where('last_polled_at', '<=', idleSince)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Tells the triggers the lifetime of grant, family and client events; writes only on a change. */
export async function writeEventLifetime(
  db: Kysely<Database>,
  lifetime: { accessTokenTtl: number; leeway: number },
): Promise<void> {
  await db
    .updateTable('revocation_event_settings')
    .set({ access_token_ttl_seconds: lifetime.accessTokenTtl, leeway_seconds: lifetime.leeway })
    .where((eb) =>
      eb.or([
        eb('access_token_ttl_seconds', '<>', lifetime.accessTokenTtl),
        eb('leeway_seconds', '<>', lifetime.leeway),
      ]),
    )
    .execute()
}
