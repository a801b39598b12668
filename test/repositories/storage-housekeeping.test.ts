import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { insertSession } from '../../src/accounts/session.repository.js'
import { insertEventStream } from '../../src/events/event-stream.repository.js'
import { findAuthorizationCode } from '../../src/grants/authorization-code.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { inLockedBatch } from '../../src/housekeeping/housekeeping.repository.js'
import { denyAccessToken } from '../../src/tokens/access-token-status.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { insertPendingAuthorization } from '../../src/oauth/pending-authorization.repository.js'
import { insertResourceServer } from '../../src/resource-servers/resource-server.repository.js'
import { BEFORE_ALL, challenge, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Housekeeping in storage: each table deleted at its cutoff, in bounded batches, under one lock.
 * (The shared storage suite, run on PostgreSQL and PGlite: storage-suite.ts.)
 */
const { database, fixture, insertCode, insertFamily, runStep, deleteOver } = storageSuite()

describe(STORAGE_ON, () => {
  describe('housekeeping', () => {
    /** Long before every other test's rows (2026 onwards): these cutoffs touch only this block's. */
    const at = new Date('2001-01-01T00:00:00Z')
    const justAfter = new Date(at.getTime() + 1)
    const exists = async (table: 'sign_in_sessions' | 'pending_authorizations', id: string) =>
      (await database.db.selectFrom(table).select('id').where('id', '=', id).execute()).length === 1

    it('each table: a row over exactly at its cutoff goes, one a millisecond later stays', async () => {
      const f = await fixture()
      const { db } = f
      const grant = await upsertGrant(
        db,
        { userId: f.user.id, clientId: f.client.id, scopes: ['links:read'] },
        at,
      )
      const session = (expiresAt: Date) =>
        insertSession(db, {
          tokenHash: sha256(randomToken()),
          userId: f.user.id,
          csrfSecret: 'c',
          createdAt: at,
          expiresAt,
        })
      const pending = async (expiresAt: Date) =>
        (
          await insertPendingAuthorization(db, {
            id: randomToken(16),
            clientId: f.client.id,
            redirectUri: 'https://app.example/cb',
            scopes: ['links:read'],
            state: null,
            codeChallenge: challenge,
            prompt: null,
            createdAt: at,
            expiresAt,
          })
        ).id
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      const stream = (polledAt: Date) =>
        insertEventStream(db, {
          resourceServerId: server.id,
          now: polledAt,
          idleSince: BEFORE_ALL,
          limit: 10,
        })
      const rows = {
        sessions: [await session(at), await session(justAfter)],
        pendings: [await pending(at), await pending(justAfter)],
        codes: [
          await insertCode(f, grant.id, { expiresAt: at }),
          await insertCode(f, grant.id, { expiresAt: justAfter }),
        ],
        jtis: [randomUUID(), randomUUID()],
        streams: [(await stream(at))!, (await stream(justAfter))!],
      }
      await denyAccessToken(db, rows.jtis[0]!, at, at)
      await denyAccessToken(db, rows.jtis[1]!, justAfter, at)
      // The deny list's events last until expiry plus the leeway: exactly `at` + 60 s, and 1 ms later.
      const eventsUntil = new Date(at.getTime() + 60_000)

      expect(await deleteOver('sign_in_sessions', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('pending_authorizations', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('authorization_codes', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('revoked_access_tokens', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('revocation_events', { eventsUntil })).toBe(1)
      expect(await deleteOver('event_streams', { streamsIdleSince: at })).toBe(1)

      expect([
        await exists('sign_in_sessions', rows.sessions[0]!),
        await exists('sign_in_sessions', rows.sessions[1]!),
      ]).toEqual([false, true])
      expect([
        await exists('pending_authorizations', rows.pendings[0]!),
        await exists('pending_authorizations', rows.pendings[1]!),
      ]).toEqual([false, true])
      expect(
        [
          await findAuthorizationCode(db, rows.codes[0]!),
          await findAuthorizationCode(db, rows.codes[1]!),
        ].map(Boolean),
      ).toEqual([false, true])
      const denied = await db
        .selectFrom('revoked_access_tokens')
        .select('jti')
        .where('jti', 'in', rows.jtis)
        .execute()
      expect(denied.map((r) => r.jti)).toEqual([rows.jtis[1]])
      const events = await db
        .selectFrom('revocation_events')
        .select('access_token_jti')
        .where('access_token_jti', 'in', rows.jtis)
        .execute()
      expect(events.map((r) => r.access_token_jti)).toEqual([rows.jtis[1]])
      const streams = await db
        .selectFrom('event_streams')
        .select('id')
        .where('id', 'in', rows.streams)
        .execute()
      expect(streams.map((r) => r.id)).toEqual([rows.streams[1]])
    })

    it('a batch deletes at most its size: 5 rows in batches of 2 take 3 batches', async () => {
      const f = await fixture()
      const expired = new Date('2000-01-01T00:00:00Z')
      for (let i = 0; i < 5; i++)
        await insertSession(f.db, {
          tokenHash: sha256(randomToken()),
          userId: f.user.id,
          csrfSecret: 'c',
          createdAt: expired,
          expiresAt: new Date(expired.getTime() + i * 1000),
        })
      const run = await runStep('sign_in_sessions', { expiredBefore: new Date('2000-06-01T00:00:00Z') }, 2)
      expect(run.sizes).toEqual([2, 2, 1])
      expect(run.deleted).toEqual({ sign_in_sessions: 5 })
    })

    it('refresh families: revoked ones after the horizon, expired ones after theirs, tokens in bounded batches; the code that started one stays while it does', async () => {
      const f = await fixture()
      const { db } = f
      const cutoff = new Date('2002-01-01T00:00:00Z')
      const later = new Date(cutoff.getTime() + 1)
      const farFuture = new Date('2100-01-01T00:00:00Z')
      const grant = await upsertGrant(
        db,
        { userId: f.user.id, clientId: f.client.id, scopes: ['links:read'] },
        at,
      )
      const family = async (expiresAt: Date, revokedAt: Date | null, tokens: number) => {
        const id = await insertFamily(f, grant.id)
        await db
          .updateTable('refresh_families')
          .set({ expires_at: expiresAt, revoked_at: revokedAt })
          .where('id', '=', id)
          .execute()
        for (let i = 0; i < tokens; i++)
          await db
            .insertInto('refresh_tokens')
            .values({
              token_hash: sha256(randomToken()),
              family_id: id,
              scopes: ['links:read'],
              expires_at: expiresAt,
              rotated_at: i < tokens - 1 ? at : null,
            })
            .execute()
        return id
      }
      const revoked = await family(farFuture, cutoff, 5)
      const revokedLater = await family(farFuture, later, 1)
      const expired = await family(cutoff, null, 1)
      const expiringLater = await family(later, null, 1)
      const code = await insertCode(f, grant.id, { expiresAt: at })
      await db
        .updateTable('authorization_codes')
        .set({ consumed_at: at, family_id: revoked })
        .where('code_hash', '=', code)
        .execute()
      const eventsBefore = await db
        .selectFrom('revocation_events')
        .select('id')
        .where('family_id', 'in', [revoked, expired])
        .execute()

      // A code that started a family is kept while the family is.
      await deleteOver('authorization_codes', { expiredBefore: cutoff })
      expect((await findAuthorizationCode(db, code))?.familyId).toBe(revoked)
      const run = await runStep(
        'refresh_families',
        { familiesRevokedBefore: cutoff, familiesExpiredBefore: cutoff },
        2,
      )
      expect(run.deleted).toEqual({ refresh_tokens: 6, refresh_families: 2 })
      expect(Math.max(...run.sizes)).toBeLessThanOrEqual(2)
      const left = await db
        .selectFrom('refresh_families')
        .select('id')
        .where('id', 'in', [revoked, revokedLater, expired, expiringLater])
        .execute()
      expect(left.map((r) => r.id).sort()).toEqual([revokedLater, expiringLater].sort())
      const tokens = await db
        .selectFrom('refresh_tokens')
        .select('family_id')
        .where('family_id', 'in', [revoked, revokedLater, expired, expiringLater])
        .execute()
      expect(tokens.map((r) => r.family_id).sort()).toEqual([revokedLater, expiringLater].sort())
      // Deleting a family long expired is no revocation: no event for resource servers.
      const eventsAfter = await db
        .selectFrom('revocation_events')
        .select('id')
        .where('family_id', 'in', [revoked, expired])
        .execute()
      expect(eventsAfter).toEqual(eventsBefore)
      // The family gone, its code is an ordinary expired one.
      expect((await findAuthorizationCode(db, code))?.familyId).toBeNull()
      expect(await deleteOver('authorization_codes', { expiredBefore: cutoff })).toBe(1)
      expect(await findAuthorizationCode(db, code)).toBeUndefined()
    })

    it('a batch finds the lock taken while another transaction holds it, and does nothing', async (ctx) => {
      // One connection on PGlite: there is no other session to hold the lock (and one process).
      if (database.engine === 'pglite') ctx.skip()
      const inner = await inLockedBatch(database.db, async () =>
        inLockedBatch(database.db, async () => 'second'),
      )
      expect(inner).toBeUndefined()
      expect(await inLockedBatch(database.db, async () => 'alone')).toBe('alone')
    })
  })
})
