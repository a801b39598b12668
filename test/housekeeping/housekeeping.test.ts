import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertSession } from '../../src/accounts/session.repository.js'
import { runCli } from '../../src/cli/main.js'
import { inLockedBatch } from '../../src/housekeeping/housekeeping.repository.js'
import { autovacuumIsOff, createHousekeepingService } from '../../src/housekeeping/housekeeping.service.js'
import { createLogger } from '../../src/logger.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { testEngine } from '../helpers/database.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  tokenRequest,
} from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'

const DAY = 24 * 3600
const HORIZON = DAY
const lines: string[] = []
let t: TestApp
let clock: TestClock
let party: Party

beforeAll(async () => {
  // Two months back: every time these tests move to stays in the database's past, as in production,
  // where the triggers' now() and the server's clock agree.
  clock = createTestClock(new Date(Date.now() - 60 * DAY * 1000))
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  t = await buildTestApp({
    clock,
    logDestination: sink,
    env: {
      LOG_LEVEL: 'info',
      HOUSEKEEPING_REPLAY_HORIZON: String(HORIZON),
      REFRESH_TOKEN_TTL: '3600',
      REFRESH_TOKEN_ABSOLUTE_TTL: '3600',
    },
  })
  party = await createParty(t)
})
afterAll(async () => t.close())

const refresh = (refreshToken: string) =>
  tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: party.client.id })

const familyExists = async (id: string) =>
  (await t.database.db.selectFrom('refresh_families').select('id').where('id', '=', id).execute()).length > 0

const familyOf = async (refreshToken: string) =>
  (
    await t.database.db
      .selectFrom('refresh_tokens')
      .select('family_id')
      .where('token_hash', '=', sha256(refreshToken))
      .executeTakeFirstOrThrow()
  ).family_id

const metricsText = async () =>
  (await t.admin.inject({ method: 'GET', url: '/metrics', headers: adminHeaders })).body

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

async function expiredSessions(count: number): Promise<string[]> {
  const ids: string[] = []
  const now = clock.now()
  for (let i = 0; i < count; i++)
    ids.push(
      await insertSession(t.database.db, {
        tokenHash: sha256(randomToken()),
        userId: party.userId,
        csrfSecret: 'c',
        createdAt: new Date(now.getTime() - 3600_000),
        expiresAt: new Date(now.getTime() - 120_000),
      }),
    )
  return ids
}

const sessionsLeft = async (ids: string[]) =>
  (await t.database.db.selectFrom('sign_in_sessions').select('id').where('id', 'in', ids).execute()).length

/** A second service over the same database, as another instance would have. */
const otherInstance = (batchSize: number) =>
  createHousekeepingService({
    db: t.database.db,
    clock,
    logger: createLogger('silent'),
    metrics: createMetrics(),
    config: { ...t.config, housekeepingBatchSize: batchSize },
    eventStreamIdleSince: t.services.events.idleSince,
  })

describe('refresh families past the replay horizon', () => {
  it('a spent token is a replay within the horizon, and still refused (invalid_grant) once its family is gone', async () => {
    const first = await exchangeCode(t, party)
    const rotated = await refresh(first.refresh_token)
    expect(rotated.statusCode).toBe(200)
    const second = rotated.json().refresh_token as string
    const revokedFamily = await familyOf(second)
    // Reuse after the retry window: the family is revoked now.
    clock.advance(t.config.refreshReuseWindow)
    expect((await refresh(first.refresh_token)).json().error).toBe('invalid_grant')
    const expiring = await exchangeCode(t, party)
    const expiringFamily = await familyOf(expiring.refresh_token)

    clock.advance(HORIZON - 1)
    expect((await t.services.housekeeping.run()).outcome).toBe('completed')
    expect(await familyExists(revokedFamily)).toBe(true)
    // Within the horizon nothing changed: a replay is recognised and counted as one.
    const reuseBefore = sample(await metricsText(), 'linkauth_refresh_token_reuse_total') ?? 0
    const replay = await refresh(first.refresh_token)
    expect(replay.json()).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringMatching(/already been used/),
    })
    expect(sample(await metricsText(), 'linkauth_refresh_token_reuse_total')).toBe(reuseBefore + 1)

    clock.advance(1)
    const atHorizon = await t.services.housekeeping.run()
    expect(atHorizon.deleted.refresh_families).toBeGreaterThanOrEqual(1)
    expect(atHorizon.deleted.refresh_tokens).toBeGreaterThanOrEqual(2)
    expect(await familyExists(revokedFamily)).toBe(false)
    // The other family expired an hour in: it goes a horizon after that.
    expect(await familyExists(expiringFamily)).toBe(true)
    clock.advance(3600)
    await t.services.housekeeping.run()
    expect(await familyExists(expiringFamily)).toBe(false)

    for (const token of [first.refresh_token, second, expiring.refresh_token]) {
      const res = await refresh(token)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token is invalid.',
      })
    }
    // Its access tokens expired long ago; without the family they are not live either.
    const claims = jwtClaims(first.access_token) as Record<string, string>
    const reference = {
      jti: claims.jti!,
      grantId: claims.grant_id!,
      familyId: claims.family_id!,
      clientId: claims.client_id!,
      userId: claims.sub!,
    }
    expect(await t.services.accessTokenStatus.isAccessTokenLive(reference)).toBe(false)
    // An expired family's deletion is no revocation: no event for resource servers.
    const events = await t.database.db
      .selectFrom('revocation_events')
      .select('id')
      .where('family_id', '=', expiringFamily)
      .execute()
    expect(events).toEqual([])
    await expectInvariants(t.database.db)
  })
})

describe('authorization codes', () => {
  it('a used code outlives its expiry as long as its family: a replay still revokes what it issued', async () => {
    const { code, verifier } = await mintCode(t, party)
    const exchange = {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: party.client.id,
    }
    const issued = (await tokenRequest(t, exchange)).json().refresh_token as string
    clock.advance(t.config.authCodeTtl + 120)
    await t.services.housekeeping.run()
    const codeRow = await t.database.db
      .selectFrom('authorization_codes')
      .select('family_id')
      .where('code_hash', '=', sha256(code))
      .executeTakeFirst()
    expect(codeRow?.family_id).toBe(await familyOf(issued))
    const replay = await tokenRequest(t, exchange)
    expect(replay.json().error).toBe('invalid_grant')
    expect((await refresh(issued)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token has been revoked.',
    })
  })
})

describe('a run', () => {
  it('counts what it deleted per table in the metrics and writes one log line', async () => {
    const ids = await expiredSessions(3)
    lines.length = 0
    const run = await t.services.housekeeping.run()
    expect(run.deleted.sign_in_sessions).toBe(3)
    expect(await sessionsLeft(ids)).toBe(0)
    const text = await metricsText()
    expect(
      sample(text, 'linkauth_housekeeping_deleted_rows_total{table="sign_in_sessions"}'),
    ).toBeGreaterThanOrEqual(3)
    expect(
      sample(text, 'linkauth_housekeeping_run_duration_seconds_count{outcome="completed"}'),
    ).toBeGreaterThanOrEqual(1)
    const logged = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'housekeeping run')
    expect(logged).toHaveLength(1)
    expect(logged[0]).toMatchObject({
      outcome: 'completed',
      deleted: expect.objectContaining({ sign_in_sessions: 3, refresh_families: 0 }),
      durationMs: expect.any(Number),
    })
  })

  it('POST /admin/housekeeping/run needs the admin token and answers what it deleted; so does the CLI', async () => {
    const refused = await t.admin.inject({ method: 'POST', url: '/admin/housekeeping/run' })
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
    const ids = await expiredSessions(2)
    const res = await t.admin.inject({
      method: 'POST',
      url: '/admin/housekeeping/run',
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      outcome: 'completed',
      deleted: { sign_in_sessions: 2 },
      batches: { sign_in_sessions: 1 },
      duration_seconds: expect.any(Number),
    })
    expect(await sessionsLeft(ids)).toBe(0)

    await expiredSessions(1)
    const adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
    const out: string[] = []
    const code = await runCli(['housekeeping', 'run'], {
      out: (s) => out.push(s),
      err: (s) => out.push(s),
      env: { LINKAUTH_ADMIN_URL: adminUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN, DATA_DIR: '/nonexistent' },
    })
    expect(code).toBe(0)
    expect(out.join('\n')).toMatch(/^completed in [\d.]+ s\n[\s\S]*sign_in_sessions\s+1$/m)
  })
})

describe('one instance at a time', () => {
  it('two instances running at once delete each row once', async () => {
    const ids = await expiredSessions(9)
    const [a, b] = [otherInstance(2), otherInstance(2)]
    const runs = await Promise.all([a.run(), b.run()])
    expect(runs[0].deleted.sign_in_sessions + runs[1].deleted.sign_in_sessions).toBe(9)
    expect(runs.map((r) => r.outcome)).toContain('completed')
    expect(await sessionsLeft(ids)).toBe(0)
  })

  // Another instance's lock needs another session: PGlite has one, where the lock is re-entrant and
  // the second run would wait behind the first forever.
  it.skipIf(testEngine() !== 'postgres')(
    'while another instance holds the lock, a run deletes nothing and says busy',
    async () => {
      const ids = await expiredSessions(2)
      const run = await inLockedBatch(t.database.db, () => otherInstance(1000).run())
      expect(run).toMatchObject({ outcome: 'busy', deleted: { sign_in_sessions: 0 } })
      expect(await sessionsLeft(ids)).toBe(2)
      expect((await otherInstance(1000).run()).deleted.sign_in_sessions).toBe(2)
    },
  )
})

describe('the schedule', () => {
  it('runs every HOUSEKEEPING_INTERVAL; app.close() stops it', async () => {
    const scheduled = await buildTestApp({ clock, database: t.database, env: { HOUSEKEEPING_INTERVAL: '1' } })
    const ids = await expiredSessions(3)
    await expect.poll(() => sessionsLeft(ids), { timeout: 5_000 }).toBe(0)
    await scheduled.close()
    const after = await expiredSessions(1)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(await sessionsLeft(after)).toBe(1)
    await otherInstance(1000).run()
  })

  // A row lock held by one transaction while a run waits on it needs two sessions: PostgreSQL only.
  it.skipIf(testEngine() !== 'postgres')('app.close() waits for a run under way', async () => {
    const scheduled = await buildTestApp({ clock, database: t.database, env: { HOUSEKEEPING_INTERVAL: '1' } })
    // A run blocked on a row lock: close() must wait for it, and the run ends after that batch.
    const [locked] = await expiredSessions(1)
    let release!: () => void
    const holding = t.database.db.transaction().execute(async (trx) => {
      await sql`select 1 from sign_in_sessions where id = ${locked} for update`.execute(trx)
      await new Promise<void>((resolve) => (release = resolve))
    })
    await expect
      .poll(
        async () => {
          const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query like '%delete from "sign_in_sessions"%'`.execute(
            t.database.db,
          )
          return rows[0]!.n
        },
        { timeout: 5_000 },
      )
      .toBe(1)
    let closed = false
    const closing = scheduled.close().then(() => (closed = true))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(closed).toBe(false)
    release()
    await holding
    await closing
    expect(await sessionsLeft([locked!])).toBe(0)
  })

  it('says at start, once, when PostgreSQL’s autovacuum is off (the space of deleted rows is never reused)', async () => {
    const setting = await sql<{ s: string }>`select current_setting('autovacuum') as s`.execute(t.database.db)
    const off = setting.rows[0]!.s === 'off'
    expect(await autovacuumIsOff(t.database.db)).toBe(off)
    const own: string[] = []
    const sink = new Writable({
      write(chunk, _encoding, done) {
        own.push(String(chunk))
        done()
      },
    })
    const started = await buildTestApp({
      clock,
      database: t.database,
      logDestination: sink,
      env: { LOG_LEVEL: 'warn' },
    })
    await started.close()
    const warned = own.filter((l) => l.includes('PostgreSQL autovacuum is off') && l.includes('"level":40'))
    expect(warned).toHaveLength(off ? 1 : 0)
  })

  it('HOUSEKEEPING_INTERVAL=0: no scheduled run', async () => {
    const off = await buildTestApp({ clock, database: t.database, env: { HOUSEKEEPING_INTERVAL: '0' } })
    try {
      expect(off.config.housekeepingInterval).toBe(0)
      const ids = await expiredSessions(1)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(await sessionsLeft(ids)).toBe(1)
    } finally {
      await off.close()
    }
  })
})
