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
 * Marks a stream polled now. False when the resource server has no such stream, or it was idle
 * since `idleSince` (swept or about to be): the caller must start a new one.
 */
export async function touchEventStream(
  db: Kysely<Database>,
  stream: { id: string; resourceServerId: string; now: Date; idleSince: Date },
): Promise<boolean> {
  const row = await db
    .updateTable('event_streams')
    .set({ last_polled_at: stream.now })
    .where('id', '=', stream.id)
    .where('resource_server_id', '=', stream.resourceServerId)
    .where('last_polled_at', '>', stream.idleSince)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
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

/** The stream's events not yet acknowledged and still relevant at `now`, oldest first. */
export async function findPendingEvents(
  db: Kysely<Database>,
  streamId: string,
  now: Date,
  limit: number,
): Promise<RevocationEvent[]> {
  const rows = await db
    .selectFrom('revocation_events as e')
    .selectAll('e')
    .where('e.until', '>', now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('revocation_event_acks as a')
            .select('a.event_id')
            .whereRef('a.event_id', '=', 'e.id')
            .where('a.stream_id', '=', streamId),
        ),
      ),
    )
    .orderBy('e.created_at')
    .orderBy('e.id')
    .limit(limit)
    .execute()
  return rows.map(toRevocationEvent)
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
