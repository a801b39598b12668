import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { REVOCATION_EVENTS_CHANNEL } from '../../src/events/event-feed.service.js'
import {
  findPendingEvents,
  insertEventStream,
  recordStreamPoll,
  writeEventLifetime,
} from '../../src/events/event-stream.repository.js'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { denyAccessToken } from '../../src/tokens/access-token-status.repository.js'
import { randomToken } from '../../src/lib/secrets.js'
import { insertResourceServer } from '../../src/resource-servers/resource-server.repository.js'
import { now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Revocation events in storage: recorded in the revoking transaction, their lifetime, streams and
 * what is pending on them. (The shared storage suite, run on PostgreSQL and PGlite: storage-
 * suite.ts.)
 */
const { database, fixture, deleteOver } = storageSuite()

describe(STORAGE_ON, () => {
  describe('revocation events', () => {
    const eventsOf = (db: typeof database.db, column: 'grant_id' | 'access_token_jti', id: string) =>
      db.selectFrom('revocation_events').selectAll().where(column, '=', id).execute()

    it('a revocation records its event in its own transaction and notifies listeners at commit', async () => {
      const { db, user, client } = await fixture()
      let notified = 0
      const stop = await database.listen(REVOCATION_EVENTS_CHANNEL, {
        notify: () => notified++,
        listening: () => {},
        lost: () => {},
      })
      try {
        const grant = await upsertGrant(
          db,
          { userId: user.id, clientId: client.id, scopes: ['links:read'] },
          now,
        )
        await db
          .insertInto('refresh_families')
          .values({ grant_id: grant.id, client_id: client.id, user_id: user.id, scopes: [], expires_at: now })
          .execute()
        await db
          .transaction()
          .execute(async (trx) => {
            await revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test')
            throw new Error('rolled back')
          })
          .catch(() => undefined)
        expect(await eventsOf(db, 'grant_id', grant.id)).toEqual([])
        await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
        // One event: the family revoked with its grant is covered by the grant's.
        const events = await eventsOf(db, 'grant_id', grant.id)
        expect(events).toHaveLength(1)
        expect(events[0]).toMatchObject({ type: 'grant-revoked', family_id: null, created_at: now })
        expect(events[0]!.until.getTime() - now.getTime()).toBe(660_000)
        await expect.poll(() => notified, { timeout: 5_000 }).toBeGreaterThan(0)
      } finally {
        await stop()
      }
    })

    it('deny-listing an access token twice records one event, until its exp + leeway', async () => {
      const db = database.db
      const jti = randomUUID()
      const exp = new Date(now.getTime() + 600_000)
      await denyAccessToken(db, jti, exp, now)
      await denyAccessToken(db, jti, exp, now)
      const events = await eventsOf(db, 'access_token_jti', jti)
      expect(events).toHaveLength(1)
      expect(events[0]!.until.getTime() - exp.getTime()).toBe(60_000)
    })

    it('the lifetime written for the triggers applies to later events', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      await writeEventLifetime(db, { accessTokenTtl: 120, leeway: 30 })
      try {
        await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
      } finally {
        await writeEventLifetime(db, { accessTokenTtl: 600, leeway: 60 })
      }
      const [event] = await eventsOf(db, 'grant_id', grant.id)
      expect(event!.until.getTime() - now.getTime()).toBe(150_000)
    })

    it('a resource server gets at most `limit` live streams; idle ones do not count; others are unaffected', async () => {
      const db = database.db
      const at = new Date('2031-01-01T00:00:00Z')
      const servers = await Promise.all(
        [1, 2].map(() =>
          insertResourceServer(db, { id: `rs_${randomToken(8)}`, name: 'API', secretHash: 'h' }),
        ),
      )
      const create = (serverId: string, now = at) =>
        insertEventStream(db, {
          resourceServerId: serverId,
          now,
          idleSince: new Date(now.getTime() - 600_000),
          limit: 2,
        })
      // Created at once: the lock on the server's row makes them count one another.
      const first = await Promise.all([
        create(servers[0]!.id),
        create(servers[0]!.id),
        create(servers[0]!.id),
      ])
      expect(first.filter((id) => id !== undefined)).toHaveLength(2)
      expect(await create(servers[1]!.id)).toBeDefined()
      // Ten minutes later the first two are idle: they no longer count.
      const later = new Date(at.getTime() + 600_000)
      expect(await create(servers[0]!.id, later)).toBeDefined()
      expect(await create('rs_no_such_server', later)).toBeUndefined()
    })

    it('streams: pending is unacknowledged and unexpired, oldest first, per stream; housekeeping deletes both kinds', async () => {
      const db = database.db
      // Later than every other test's events, so that only these are pending.
      const later = new Date('2030-01-01T00:00:00Z')
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      const newStream = async () =>
        (await insertEventStream(db, {
          resourceServerId: server.id,
          now: later,
          idleSince: new Date(later.getTime() - 600_000),
          limit: 10,
        }))!
      const stream = await newStream()
      const sibling = await newStream()
      const jtis = [randomUUID(), randomUUID(), randomUUID()]
      for (const [i, jti] of jtis.entries()) {
        const at = new Date(later.getTime() + i * 1000)
        await denyAccessToken(db, jti, new Date(at.getTime() + (i + 1) * 60_000), at)
      }
      const pendingJtis = async (at: Date, limit = 10, of = stream) =>
        ((await findPendingEvents(db, [of], at, limit)).get(of) ?? []).map((e) => e.jti)
      const poll = (resourceServerId: string, now: Date, acknowledged: string[] = []) =>
        recordStreamPoll(db, {
          streamId: stream,
          resourceServerId,
          acknowledged,
          now,
          idleSince: new Date(now.getTime() - 600_000),
          touchBefore: new Date(now.getTime() - 60_000),
        })
      const pending = (await findPendingEvents(db, [stream], later, 10)).get(stream)!
      expect(pending.map((e) => e.jti)).toEqual(jtis)
      expect(await pendingJtis(later, 2)).toEqual(jtis.slice(0, 2))
      // Another resource server's poll of this stream acknowledges nothing.
      expect(await poll('rs_other', later, [pending[0]!.id])).toBe(false)
      expect(await poll(server.id, later, [pending[1]!.id, randomUUID()])).toBe(true)
      expect(await poll(server.id, later, [pending[1]!.id])).toBe(true)
      // One statement for both streams: each has its own acknowledgements.
      const both = await findPendingEvents(db, [stream, sibling], later, 10)
      expect(both.get(stream)!.map((e) => e.jti)).toEqual([jtis[0], jtis[2]])
      expect(both.get(sibling)!.map((e) => e.jti)).toEqual(jtis)
      // The first event's until is later + 2 min: past it, it is no longer pending.
      const afterFirst = new Date(later.getTime() + 150_000)
      expect(await pendingJtis(afterFirst)).toEqual([jtis[2]])

      const lastPolled = async () =>
        (
          await db
            .selectFrom('event_streams')
            .select('last_polled_at')
            .where('id', '=', stream)
            .executeTakeFirstOrThrow()
        ).last_polled_at
      expect(await poll('rs_other', later)).toBe(false)
      // Polled 30 s later: live, and not written (the last poll is recent enough).
      expect(await poll(server.id, new Date(later.getTime() + 30_000))).toBe(true)
      expect(await lastPolled()).toEqual(later)
      // Polled 90 s later: written.
      const polled = new Date(later.getTime() + 90_000)
      expect(await poll(server.id, polled)).toBe(true)
      expect(await lastPolled()).toEqual(polled)
      // Idle past its limit: no longer a stream.
      expect(await poll(server.id, new Date(polled.getTime() + 600_000))).toBe(false)

      expect(await deleteOver('revocation_events', { eventsUntil: afterFirst })).toBeGreaterThanOrEqual(1)
      expect(await pendingJtis(later)).toEqual([jtis[2]])
      expect(await deleteOver('event_streams', { streamsIdleSince: polled })).toBeGreaterThanOrEqual(2)
      expect(await poll(server.id, polled)).toBe(false)
      const acks = await db
        .selectFrom('revocation_event_acks')
        .select('event_id')
        .where('stream_id', '=', stream)
        .execute()
      expect(acks).toEqual([])
    })
  })
})
