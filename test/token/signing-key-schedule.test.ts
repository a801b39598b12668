import { decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_ROTATION_SECONDS, loadConfig } from '../../src/config.js'
import { nextKeyLeadSeconds } from '../../src/tokens/signing-key-schedule.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { createParty, exchangeCode } from '../helpers/fixtures.js'
import { createResourceServer, introspect } from '../helpers/tokens.js'

/**
 * SIGNING_KEY_ROTATION with two instances of the server on one database and one test clock: the
 * next key is in both JWKS for at least a JWKS cache lifetime before either signs with it, both
 * switch at its time without a split, and the retired key leaves once its tokens are dead.
 */

const DAY = 86_400

describe('SIGNING_KEY_ROTATION', () => {
  it('reads durations and "off"; the default depends on the database', () => {
    const base = { KEY_ENCRYPTION_KEY: '0'.repeat(64) }
    expect(loadConfig({ ...base, SIGNING_KEY_ROTATION: '30d' }).signingKeyRotation).toBe(30 * DAY)
    expect(loadConfig({ ...base, SIGNING_KEY_ROTATION: '12h' }).signingKeyRotation).toBe(12 * 3600)
    expect(loadConfig({ ...base, SIGNING_KEY_ROTATION: '2w' }).signingKeyRotation).toBe(14 * DAY)
    expect(loadConfig({ ...base, SIGNING_KEY_ROTATION: 'off' }).signingKeyRotation).toBe(0)
    expect(loadConfig(base).signingKeyRotation).toBe(0)
    expect(loadConfig({ ...base, DATABASE_URL: 'postgres://db/x' }).signingKeyRotation).toBe(
      DEFAULT_ROTATION_SECONDS,
    )
    expect(
      loadConfig({ ...base, DATABASE_URL: 'postgres://db/x', SIGNING_KEY_ROTATION: 'off' })
        .signingKeyRotation,
    ).toBe(0)
    for (const bad of ['30', '10m', '1y', '-1d', 'monthly'])
      expect(() => loadConfig({ ...base, SIGNING_KEY_ROTATION: bad }), bad).toThrow(
        /^SIGNING_KEY_ROTATION: expected .*1h|^SIGNING_KEY_ROTATION: expected a duration/,
      )
    expect(() => loadConfig({ SIGNING_KEY_ROTATION: 'soon' })).toThrow(ConfigError)
  })

  it('publishes the next key at least a JWKS cache lifetime (plus a poll) ahead, at most a day', () => {
    expect(nextKeyLeadSeconds(3600)).toBe(1800)
    expect(nextKeyLeadSeconds(30 * DAY)).toBe(DAY)
    for (const period of [3600, 7200, DAY, 30 * DAY]) expect(nextKeyLeadSeconds(period)).toBeGreaterThan(60)
  })
})

describe('two instances on one database', () => {
  let database: TestDatabase
  let clock: TestClock
  let a: TestApp
  let b: TestApp
  const env = { SIGNING_KEY_ROTATION: '1d' }

  beforeAll(async () => {
    database = await createTestDatabase()
    clock = createTestClock(new Date('2026-05-01T00:00:00Z'))
    a = await buildTestApp({ clock, database, env })
    b = await buildTestApp({ clock, database, env })
    // Each instance runs the schedule once at start, in the background: let those runs finish (a
    // run of one instance waits for its own, and may meet the other's lock: then it is busy).
    await a.services.signingKeys.runSchedule()
    await b.services.signingKeys.runSchedule()
  })
  afterAll(async () => {
    await Promise.all([a.close(), b.close()])
    await database.close()
  })

  const jwksOf = async (t: TestApp) => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    const maxAge = Number(/max-age=(\d+)/.exec(String(res.headers['cache-control']))![1])
    return { kids: (res.json().keys as { kid: string }[]).map((k) => k.kid), maxAge }
  }
  const kidOfToken = async (t: TestApp) => {
    const body = await exchangeCode(t, await createParty(t))
    return { kid: decodeProtectedHeader(body.access_token).kid!, token: body.access_token }
  }
  const states = async () =>
    Object.fromEntries(
      (
        (await a.admin.inject({ method: 'GET', url: '/admin/keys', headers: adminHeaders })).json().keys as {
          kid: string
          state: string
        }[]
      ).map((k) => [k.kid, k.state]),
    )

  it('rotates on schedule with no split: published first, then one key on both', async () => {
    const first = a.services.signingKeys.activeSigningKey().kid
    expect(b.services.signingKeys.activeSigningKey().kid).toBe(first)

    // Not due yet: nothing is made.
    expect(await a.services.signingKeys.runSchedule()).toEqual({ outcome: 'done' })
    clock.advance(DAY - nextKeyLeadSeconds(DAY) - 1)
    expect(await b.services.signingKeys.runSchedule()).toEqual({ outcome: 'done' })

    // Due within the lead: both instances run the schedule at once; exactly one key is made.
    clock.advance(1)
    const runs = await Promise.all([
      a.services.signingKeys.runSchedule(),
      b.services.signingKeys.runSchedule(),
    ])
    const prepared = runs.flatMap((r) => (r.prepared ? [r.prepared] : []))
    expect(prepared).toHaveLength(1)
    const next = prepared[0]!
    expect(next.activatesAt.getTime() - clock.now().getTime()).toBe(nextKeyLeadSeconds(DAY) * 1000)
    const pendingRows = await database.db
      .selectFrom('signing_keys')
      .selectAll()
      .where('pending', '=', true)
      .execute()
    expect(pendingRows.map((r) => r.kid)).toEqual([next.kid])

    // The other instance hears of it by notification, without waiting for its poll.
    for (const t of [a, b])
      await expect.poll(() => t.services.signingKeys.nextKey()?.kid, { timeout: 3000 }).toBe(next.kid)

    // Published on both, at least one JWKS cache lifetime before it signs; tokens still carry the old kid.
    for (const t of [a, b]) {
      const { kids, maxAge } = await jwksOf(t)
      expect(kids.sort()).toEqual([first, next.kid].sort())
      expect(next.activatesAt.getTime() - clock.now().getTime()).toBeGreaterThanOrEqual(maxAge * 1000)
      expect((await kidOfToken(t)).kid).toBe(first)
    }
    expect(await states()).toMatchObject({ [first]: 'active', [next.kid]: 'next' })

    // A second before its time, still the old key; at its time both switch, before any schedule run.
    clock.set(new Date(next.activatesAt.getTime() - 1000))
    expect((await kidOfToken(a)).kid).toBe(first)
    clock.set(next.activatesAt)
    const fromA = await kidOfToken(a)
    const fromB = await kidOfToken(b)
    expect(fromA.kid).toBe(next.kid)
    expect(fromB.kid).toBe(next.kid)
    expect(await states()).toMatchObject({ [first]: 'active', [next.kid]: 'next' })

    // Each instance's introspection accepts the other's new tokens before the switch is recorded.
    const rs = await createResourceServer(a)
    expect((await introspect(b, rs, fromA.token)).active).toBe(true)
    expect((await introspect(a, rs, fromB.token)).active).toBe(true)

    // The schedule records the switch (one transaction): the old key retired at the activation time.
    clock.advance(30)
    const recorded = await b.services.signingKeys.runSchedule()
    expect(recorded).toMatchObject({ outcome: 'done', activated: next.kid })
    const rows = await database.db.selectFrom('signing_keys').selectAll().execute()
    expect(rows.filter((r) => r.retired_at === null).map((r) => r.kid)).toEqual([next.kid])
    expect(rows.find((r) => r.kid === first)!.retired_at!.getTime()).toBe(next.activatesAt.getTime())
    for (const t of [a, b]) expect(t.services.signingKeys.activeSigningKey().kid).toBe(next.kid)
    expect(await states()).toMatchObject({ [first]: 'retired', [next.kid]: 'active' })

    // The audit trail has both steps once, done by the server itself (actor system), not the operator.
    const trail = await database.db
      .selectFrom('audit_events')
      .select(['event_type', 'actor_kind', 'target_id', 'details'])
      .where('event_type', 'in', ['signing_key.prepared', 'signing_key.rotated'])
      .orderBy('id')
      .execute()
    expect(trail).toEqual([
      {
        event_type: 'signing_key.prepared',
        actor_kind: 'system',
        target_id: next.kid,
        details: { alg: 'ES256', activates_at: next.activatesAt.toISOString() },
      },
      {
        event_type: 'signing_key.rotated',
        actor_kind: 'system',
        target_id: next.kid,
        details: {
          alg: 'ES256',
          retired_kid: first,
          scheduled: true,
          activates_at: next.activatesAt.toISOString(),
        },
      },
    ])

    // The retired key leaves the JWKS once no token it signed can be alive (TTL + a minute of margin).
    // Each instance serves the JWKS from its key set in memory: a hears of b's retirement by the key
    // set's notification (or its poll), which this does now.
    await a.services.signingKeys.syncActiveKey()
    const retiredAt = next.activatesAt.getTime()
    clock.set(new Date(retiredAt + (a.config.accessTokenTtl + 59) * 1000))
    for (const t of [a, b]) expect((await jwksOf(t)).kids).toContain(first)
    clock.set(new Date(retiredAt + (a.config.accessTokenTtl + 60) * 1000))
    for (const t of [a, b]) expect((await jwksOf(t)).kids).toEqual([next.kid])
  })

  it('a rotation by hand drops the scheduled key; the schedule starts again from the new key', async () => {
    clock.advance(DAY)
    const { prepared } = await a.services.signingKeys.runSchedule()
    expect(prepared).toBeDefined()
    const rotated = await a.services.signingKeys.rotate()
    await b.services.signingKeys.syncActiveKey()
    expect(b.services.signingKeys.activeSigningKey().kid).toBe(rotated.kid)
    expect(b.services.signingKeys.nextKey()).toBeUndefined()
    expect((await states())[prepared!.kid]).toBe('retired')
    // Its time passes: nothing switches to it.
    clock.set(prepared!.activatesAt)
    expect(a.services.signingKeys.activeSigningKey().kid).toBe(rotated.kid)
    expect((await a.services.signingKeys.runSchedule()).activated).toBeUndefined()
  })

  it('after a long stop, the next key is made at once and still published a lead ahead of use', async () => {
    clock.advance(40 * DAY)
    const { prepared } = await a.services.signingKeys.runSchedule()
    expect(prepared!.activatesAt.getTime() - clock.now().getTime()).toBe(nextKeyLeadSeconds(DAY) * 1000)
  })
})

describe('with SIGNING_KEY_ROTATION=off', () => {
  it('never makes a key, however long the active one has signed', async () => {
    const clock = createTestClock(new Date('2026-05-01T00:00:00Z'))
    const t = await buildTestApp({ clock, env: { SIGNING_KEY_ROTATION: 'off' } })
    try {
      const kid = t.services.signingKeys.activeSigningKey().kid
      clock.advance(400 * DAY)
      expect(await t.services.signingKeys.runSchedule()).toEqual({ outcome: 'done' })
      expect(t.services.signingKeys.activeSigningKey().kid).toBe(kid)
      expect(await t.database.db.selectFrom('signing_keys').select('kid').execute()).toHaveLength(1)
    } finally {
      await t.close()
    }
  })
})
