import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { checkRedis, deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js'

// Issue 31, item 1: guesses sent in parallel must not pass the sign-in throttle. Each attempt is
// reserved before its password is checked, so the argon2 verifications (counted by
// linkauth_password_checks_total, incremented where the one verifying function is called) never
// exceed the documented caps: 5 per (account, client) before the delay, 20 per account per
// 15 minutes from unknown clients. Production defaults; a clock that stands still, so no delay ends
// during a test.
const redisUp = await checkRedis()
const prefixes: string[] = []
let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
  if (redisUp) for (const prefix of prefixes) await deleteKeys(prefix)
})

async function passwordChecks(t: TestApp): Promise<number> {
  const text = await t.services.metrics.registry.getSingleMetricAsString('linkauth_password_checks_total')
  return Number(/linkauth_password_checks_total (\d+)/.exec(text)?.[1] ?? NaN)
}

/** A sign-in form's CSRF cookie and field, fetched as the client at `address` (X-Forwarded-For). */
async function signInForm(t: TestApp, address: string) {
  const page = await t.app.inject({ method: 'GET', url: '/login', headers: { 'x-forwarded-for': address } })
  const cookie = [page.headers['set-cookie']]
    .flat()
    .map((c) => String(c).split(';')[0])
    .join('; ')
  return { cookie, csrf: hiddenField(page.body, 'csrf_token') }
}

/** `perAddress` wrong guesses at `email` from each address, all sent at once, spread over `apps`. */
async function parallelGuesses(apps: TestApp[], email: string, addresses: string[], perAddress: number) {
  const forms = await Promise.all(addresses.map((a) => signInForm(apps[0]!, a)))
  const sends: Promise<LightMyRequestResponse>[] = []
  for (let i = 0; i < perAddress; i++)
    for (const [n, address] of addresses.entries())
      sends.push(
        apps[sends.length % apps.length]!.app.inject({
          method: 'POST',
          url: '/login',
          remoteAddress: '10.0.0.1', // the proxy
          headers: {
            'x-forwarded-for': address,
            cookie: forms[n]!.cookie,
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: new URLSearchParams({
            email,
            password: `guess ${i}`,
            csrf_token: forms[n]!.csrf,
          }).toString(),
        }),
      )
  return (await Promise.all(sends)).map((r) => r.statusCode)
}

const ADDRESSES = ['192.0.2.11', '192.0.2.12', '192.0.2.13', '192.0.2.14']

describe('parallel guesses against the sign-in throttle (memory store)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ database, clock: createTestClock(), env: { TRUST_PROXY: 'true' } })
  })
  afterAll(async () => t.close())

  it('100 parallel wrong passwords over 4 addresses: at most 20 verified (5 per client, 20 per account)', async () => {
    const { email } = await seed(t)
    const before = await passwordChecks(t)
    const statuses = await parallelGuesses([t], email, ADDRESSES, 25)
    const checked = (await passwordChecks(t)) - before
    expect(checked).toBeGreaterThan(0)
    expect(checked).toBeLessThanOrEqual(20)
    // Every verified guess is a 400; every other one was held back before any argon2 work.
    expect(statuses.filter((s) => s === 400)).toHaveLength(checked)
    expect(statuses.filter((s) => s === 429)).toHaveLength(100 - checked)
  })

  it('50 parallel wrong passwords from one address: at most 5 verified', async () => {
    const { email } = await seed(t)
    const before = await passwordChecks(t)
    const statuses = await parallelGuesses([t], email, ['192.0.2.21'], 25)
    const more = await parallelGuesses([t], email, ['192.0.2.21'], 25)
    expect((await passwordChecks(t)) - before).toBe(5)
    expect([...statuses, ...more].filter((s) => s === 400)).toHaveLength(5)
  })

  it('the current password of /account/password: 25 parallel guesses, at most 5 verified', async () => {
    const { email } = await seed(t)
    const browser = new Browser(t.app, '192.0.2.31')
    expect((await browser.signIn(email, PASSWORD)).statusCode).toBe(303)
    const page = await browser.get('/account/password')
    const csrf = hiddenField(page.body, 'csrf_token')
    const before = await passwordChecks(t)
    const statuses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        browser.post('/account/password', {
          csrf_token: csrf,
          current_password: `guess ${i}`,
          new_password: 'a brand new password',
          confirm_password: 'a brand new password',
        }),
      ),
    ).then((answers) => answers.map((r) => r.statusCode))
    const checked = (await passwordChecks(t)) - before
    expect(checked).toBeGreaterThan(0)
    expect(checked).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s === 429)).toHaveLength(25 - checked)
  })

  it('a success gives its reservation back: it never spends the account-wide budget of failures', async () => {
    const { email } = await seed(t)
    const stranger = (n: number) => new Browser(t.app, `198.51.100.${n}`)
    for (let i = 0; i < 19; i++) expect((await stranger(i).signIn(email, `guess ${i}`)).statusCode).toBe(400)
    // The owner, on a new device: reserves the 20th place, succeeds, gives it back.
    expect((await stranger(100).signIn(email, PASSWORD)).statusCode).toBe(303)
    expect((await stranger(101).signIn(email, 'guess 19')).statusCode).toBe(400)
    expect((await stranger(102).signIn(email, 'guess 20')).statusCode).toBe(429)
  })
})

describe.skipIf(!redisUp)('parallel guesses across two instances sharing Redis', () => {
  it('100 parallel wrong passwords over 4 addresses and 2 instances: at most 20 verified in all', async () => {
    const prefix = uniquePrefix()
    prefixes.push(prefix)
    const env = { TRUST_PROXY: 'true', REDIS_URL: TEST_REDIS_URL, RATE_LIMIT_REDIS_PREFIX: prefix }
    const one = await buildTestApp({ database, env })
    const two = await buildTestApp({ database, env })
    try {
      const { email } = await seed(one)
      const before = (await passwordChecks(one)) + (await passwordChecks(two))
      const statuses = await parallelGuesses([one, two], email, ADDRESSES, 25)
      const checked = (await passwordChecks(one)) + (await passwordChecks(two)) - before
      expect(checked).toBeGreaterThan(0)
      expect(checked).toBeLessThanOrEqual(20)
      expect(statuses.filter((s) => s === 400)).toHaveLength(checked)
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })
})
