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
  /** The signing key a key-revoked event removes. */
  kid: string | null
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
    kid: row.kid,
    createdAt: row.created_at,
    until: row.until,
  }
}

/**
 * A new stream of the resource server, unless it already has `limit` live ones (polled since
 * `idleSince`; idle ones are about to be deleted and do not count): then undefined, nothing written.
 * The resource server's row is locked first, in a statement of its own, so that the count (the next
 * statement, with a snapshot taken after the lock) sees every stream created before: concurrent
 * creations cannot together pass the limit.
 */
export async function insertEventStream(
  db: Kysely<Database>,
  stream: { resourceServerId: string; now: Date; idleSince: Date; limit: number },
): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    const server = await trx
      .selectFrom('resource_servers')
      .select('id')
      .where('id', '=', stream.resourceServerId)
      .forUpdate()
      .executeTakeFirst()
    if (!server) return undefined
    const { rows } = await sql<{ id: string }>`
      insert into event_streams (resource_server_id, created_at, last_polled_at)
      select ${server.id}, ${stream.now}, ${stream.now}
       where (select count(*) from event_streams s
               where s.resource_server_id = ${server.id} and s.last_polled_at > ${stream.idleSince}) < ${stream.limit}
      returning id
    `.execute(trx)
    return rows[0]?.id
  })
}

/**
 * One poll's bookkeeping in ONE statement (one round trip): checks that the resource server has this
 * stream and that it has not been idle since `idleSince`, records the events it acknowledges (ids of
 * no event are ignored), and records the poll itself. False when there is no such stream: nothing is
 * written, and the caller must start a new one. The poll time is written only when the recorded one
 * is older than `touchBefore`, so that polling again and again without acknowledging costs no commit.
 */
export async function recordStreamPoll(
  db: Kysely<Database>,
  poll: {
    streamId: string
    resourceServerId: string
    acknowledged: readonly string[]
    now: Date
    idleSince: Date
    touchBefore: Date
  },
): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with live as (
      select id, last_polled_at from event_streams
       where id = ${poll.streamId} and resource_server_id = ${poll.resourceServerId}
         and last_polled_at > ${poll.idleSince}
    ), touched as (
      update event_streams as s set last_polled_at = ${poll.now}
        from live
       where s.id = live.id and live.last_polled_at < ${poll.touchBefore}
    ), acknowledged as (
      insert into revocation_event_acks (stream_id, event_id)
      select live.id, e.id from live join revocation_events as e on e.id = any(${poll.acknowledged}::uuid[])
      on conflict do nothing
    )
    select id from live
  `.execute(db)
  return rows.length > 0
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
