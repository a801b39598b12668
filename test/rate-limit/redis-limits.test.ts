import { connect, createServer, type Server, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken } from '../../src/lib/secrets.js'
import { systemClock } from '../../src/lib/clock.js'
import { createLogger } from '../../src/logger.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { createRateLimitStore } from '../../src/rate-limit/rate-limit-store.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, PASSWORD, seed } from '../helpers/browser.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { createParty } from '../helpers/fixtures.js'
import { freePort } from '../helpers/net.js'
import { retryAfter } from '../helpers/rate-limit.js'
import { checkRedis, deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js'

// Real Redis (REQUIRE_REDIS=1 in CI makes its absence a failure) and real time: short windows.
const redisUp = await checkRedis()
const prefixes: string[] = []
let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase() // one for the file: the apps here differ only in their limits
})
afterAll(async () => {
  await database.close()
  if (redisUp) for (const prefix of prefixes) await deleteKeys(prefix)
})

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** An app counting in Redis under `prefix` (a new one by default). */
async function redisApp(env: Record<string, string>, prefix = uniquePrefix()) {
  prefixes.push(prefix)
  return buildTestApp({
    database,
    env: { REDIS_URL: TEST_REDIS_URL, RATE_LIMIT_REDIS_PREFIX: prefix, ...env },
  })
}

const tokenRequest = (t: TestApp, clientId: string, address = '192.0.2.10') =>
  t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `grant_type=refresh_token&refresh_token=${randomToken()}&client_id=${clientId}`,
  })

describe.skipIf(!redisUp)('limits in Redis', () => {
  it('two instances sharing Redis share one limit (token endpoint)', async () => {
    const prefix = uniquePrefix()
    const one = await redisApp({ TOKEN_RATE_LIMIT: '4' }, prefix)
    const two = await redisApp({ TOKEN_RATE_LIMIT: '4' }, prefix)
    const alone = await redisApp({ TOKEN_RATE_LIMIT: '4' }, uniquePrefix())
    try {
      const party = await createParty(one)
      for (const t of [one, two, one, two])
        expect((await tokenRequest(t, party.client.id)).statusCode).toBe(400)
      for (const t of [one, two]) {
        const refused = await tokenRequest(t, party.client.id)
        expect(refused.statusCode).toBe(429)
        expect(retryAfter(refused)).toBeGreaterThanOrEqual(58)
        expect(retryAfter(refused)).toBeLessThanOrEqual(60)
      }
      // Another prefix (another deployment, another test) counts apart.
      expect((await tokenRequest(alone, party.client.id)).statusCode).toBe(400)
    } finally {
      await Promise.all([one.close(), two.close(), alone.close()])
    }
  })

  it('two instances share the sign-in delay: failures on one hold back the other', async () => {
    const prefix = uniquePrefix()
    const one = await redisApp({}, prefix)
    const two = await redisApp({}, prefix)
    try {
      const { email } = await seed(one)
      for (let i = 0; i < 5; i++) {
        const instance = i % 2 === 0 ? one : two
        expect(
          (await new Browser(instance.app, '198.51.100.20').signIn(email, `guess ${i}`)).statusCode,
        ).toBe(400)
      }
      const held = await new Browser(two.app, '198.51.100.20').signIn(email, PASSWORD)
      expect(held.statusCode).toBe(429)
      expect(retryAfter(held)).toBe(1)
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })

  it('the growing delay ends by itself (Redis expiry)', async () => {
    const t = await redisApp({ SIGN_IN_FREE_FAILURES: '1' })
    try {
      const { email } = await seed(t)
      const user = new Browser(t.app, '198.51.100.30')
      expect((await user.signIn(email, 'typo')).statusCode).toBe(400) // then a wait of 1 s
      await sleep(1_100)
      expect((await user.signIn(email, 'typo')).statusCode).toBe(400) // then a wait of 2 s
      const held = await user.signIn(email, PASSWORD)
      expect(held.statusCode).toBe(429)
      expect(retryAfter(held)).toBeGreaterThanOrEqual(1)
      expect(retryAfter(held)).toBeLessThanOrEqual(2)
      await sleep(retryAfter(held) * 1000 + 100)
      expect((await user.signIn(email, PASSWORD)).statusCode).toBe(303)
    } finally {
      await t.close()
    }
  })

  it('the account-wide limit ends by itself (Redis expiry)', async () => {
    const t = await redisApp({ SIGN_IN_ACCOUNT_LIMIT: '2', SIGN_IN_ACCOUNT_WINDOW: '5' })
    try {
      const { email } = await seed(t)
      for (const address of ['198.51.100.31', '198.51.100.32'])
        expect((await new Browser(t.app, address).signIn(email, 'guess')).statusCode).toBe(400)
      const locked = await new Browser(t.app, '198.51.100.33').signIn(email, PASSWORD)
      expect(locked.statusCode).toBe(429)
      expect(retryAfter(locked)).toBeLessThanOrEqual(5)
      await sleep(retryAfter(locked) * 1000 + 100)
      expect((await new Browser(t.app, '198.51.100.34').signIn(email, PASSWORD)).statusCode).toBe(303)
    } finally {
      await t.close()
    }
  })
})

/** A TCP relay in front of Redis that a test can cut and restore, to take Redis away mid-run. */
async function redisRelay() {
  const port = await freePort()
  const target = new URL(TEST_REDIS_URL)
  const sockets = new Set<Socket>()
  let server: Server | undefined
  const up = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 6379), target.hostname)
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on('close', () => sockets.delete(s))
          s.on('error', () => {})
        }
        client.pipe(upstream).pipe(client)
      }).listen(port, '127.0.0.1', resolve)
    })
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server!.close(() => resolve())
    })
  await up()
  return { url: `redis://127.0.0.1:${port}`, up, down }
}

function capturedLogs() {
  const lines: { level: number; msg: string }[] = []
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: createLogger('info', stream), lines }
}

describe.skipIf(!redisUp)('when Redis goes away', () => {
  it('counts in this process meanwhile (warning once, metric per operation), then in Redis again', async () => {
    const relay = await redisRelay()
    const prefix = uniquePrefix()
    prefixes.push(prefix)
    const { logger, lines } = capturedLogs()
    const metrics = createMetrics()
    const limits = createRateLimitStore({
      config: { rateLimits: true, redisUrl: relay.url, rateLimitRedisPrefix: prefix },
      clock: systemClock,
      logger,
      metrics,
    })
    await limits.start()
    try {
      expect(limits.kind).toBe('redis')
      expect((await limits.store.increment('k', 60_000)).count).toBe(1)

      await relay.down()
      await sleep(50)
      const started = performance.now()
      // In memory now: a limit still holds (counts go on from 0, in this process).
      const during = []
      for (let i = 0; i < 3; i++) during.push((await limits.store.increment('k', 60_000)).count)
      expect(during).toEqual([1, 2, 3])
      expect(performance.now() - started).toBeLessThan(1_000) // nothing waits for Redis
      expect(await metrics.rateLimitStoreErrors.get()).toMatchObject({ values: [{ value: 3 }] })
      const warnings = lines.filter((l) => l.level === 40)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.msg).toContain('rate limits count in this process only')

      await relay.up()
      // ioredis reconnects by itself (every 200 ms to 2 s); wait for it, at most 5 s.
      const reconnected = () => lines.some((l) => l.msg.includes('Redis answers again'))
      for (let waited = 0; !reconnected() && waited < 5_000; waited += 100) await sleep(100)
      expect(lines.some((l) => l.msg.includes('Redis answers again'))).toBe(true)
      expect((await limits.store.increment('k', 60_000)).count).toBe(2) // Redis's count, from before
    } finally {
      await limits.stop()
      await relay.down()
    }
  })
})

describe('when Redis cannot be reached at start', () => {
  it('the server starts and every limit still holds, per process', async () => {
    const port = await freePort() // nothing listens there
    const t = await buildTestApp({
      database,
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, TOKEN_RATE_LIMIT: '2' },
    })
    try {
      const party = await createParty(t)
      for (let i = 0; i < 2; i++) expect((await tokenRequest(t, party.client.id)).statusCode).toBe(400)
      expect((await tokenRequest(t, party.client.id)).statusCode).toBe(429)
      expect((await t.services.metrics.rateLimitStoreErrors.get()).values[0]!.value).toBeGreaterThan(0)
    } finally {
      await t.close()
    }
  })
})
