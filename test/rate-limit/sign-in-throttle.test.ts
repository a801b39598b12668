import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, PASSWORD, seed } from '../helpers/browser.js'
import { rateLimitedCount, retryAfter } from '../helpers/rate-limit.js'
import { createTestClock } from '../helpers/clock.js'

// The sign-in limits with their production defaults (5 free failures, delay 1 s doubling to 900 s,
// 20 failures per account per 900 s from unknown clients), on the memory store and a test clock.
// Only the per-address limit on every POST /login is raised here, so that the account limits show
// alone; it has its own describe below with its default.
const clock = createTestClock(new Date('2026-04-01T08:00:00.000Z'))
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ clock, env: { SIGN_IN_RATE_LIMIT: '100000' } })
})
afterAll(async () => t.close())

let addressCounter = 0
/** Forgets the session (as when it expires) but keeps the known-device cookie. */
function sessionEnds(browser: Browser): Browser {
  browser.jar.cookies.delete('linkauth_session')
  return browser
}

/** A client at an address no other test uses. */
const stranger = (app = t.app) => new Browser(app, `198.51.100.${++addressCounter % 250}`)

describe('brute force of one account from one client: a growing delay', () => {
  it('5 failures are free; then each failure makes the next attempt wait 1 s, 2 s, 4 s, …', async () => {
    const { email } = await seed(t)
    const attacker = stranger()
    for (let i = 0; i < 5; i++) expect((await attacker.signIn(email, `guess ${i}`)).statusCode).toBe(400)
    for (const wait of [1, 2, 4, 8, 16]) {
      const held = await attacker.signIn(email, 'guess again')
      expect(held.statusCode).toBe(429)
      expect(retryAfter(held)).toBe(wait)
      clock.advance(wait)
      expect((await attacker.signIn(email, 'guess again')).statusCode).toBe(400)
    }
  })

  it('a held-back attempt is refused before the password is checked, even the right password', async () => {
    const { email } = await seed(t)
    const attacker = stranger()
    for (let i = 0; i < 5; i++) await attacker.signIn(email, `guess ${i}`)
    const failuresBefore = await t.services.metrics.registry.getSingleMetricAsString(
      'linkauth_sign_in_failures_total',
    )
    const held = await attacker.signIn(email, PASSWORD)
    expect(held.statusCode).toBe(429)
    expect(held.headers['set-cookie']?.toString() ?? '').not.toContain('linkauth_session=')
    // Not counted as another failure: waiting is never made longer by trying.
    expect(await t.services.metrics.registry.getSingleMetricAsString('linkauth_sign_in_failures_total')).toBe(
      failuresBefore,
    )
    expect(retryAfter(await attacker.signIn(email, 'guess'))).toBe(1)
  })

  it('the delay stops growing at SIGN_IN_MAX_DELAY', async () => {
    const capped = await buildTestApp({
      clock,
      database: t.database,
      env: { SIGN_IN_RATE_LIMIT: '100000', SIGN_IN_MAX_DELAY: '8', SIGN_IN_ACCOUNT_LIMIT: '1000' },
    })
    try {
      const { email } = await seed(capped)
      const attacker = stranger(capped.app)
      for (let i = 0; i < 5; i++) await attacker.signIn(email, `guess ${i}`)
      const waits: number[] = []
      for (let i = 0; i < 7; i++) {
        const held = await attacker.signIn(email, 'guess')
        waits.push(retryAfter(held))
        clock.advance(retryAfter(held))
        expect((await attacker.signIn(email, 'guess')).statusCode).toBe(400)
      }
      expect(waits).toEqual([1, 2, 4, 8, 8, 8, 8])
    } finally {
      await capped.close()
    }
  })

  it('a successful sign-in forgets the failures: the next 5 are free again', async () => {
    const { email } = await seed(t)
    const user = stranger()
    for (let i = 0; i < 5; i++) await user.signIn(email, `typo ${i}`)
    clock.advance(1)
    expect((await user.signIn(email, PASSWORD)).statusCode).toBe(303)
    sessionEnds(user).jar.cookies.delete('linkauth_device') // the address, not the device, counts
    for (let i = 0; i < 5; i++) expect((await user.signIn(email, `typo ${i}`)).statusCode).toBe(400)
    expect((await user.signIn(email, 'typo')).statusCode).toBe(429)
  })

  it('the delay is per client: the same account from another address is not held back', async () => {
    const { email } = await seed(t)
    const attacker = stranger()
    for (let i = 0; i < 6; i++) await attacker.signIn(email, `guess ${i}`)
    expect((await attacker.signIn(email, 'guess')).statusCode).toBe(429)
    expect((await stranger().signIn(email, PASSWORD)).statusCode).toBe(303)
  })

  it('failures are forgotten SIGN_IN_FAILURE_TTL after the last one', async () => {
    const { email } = await seed(t)
    const user = stranger()
    for (let i = 0; i < 4; i++) await user.signIn(email, `typo ${i}`)
    clock.advance(24 * 3600)
    for (let i = 0; i < 5; i++) expect((await user.signIn(email, `typo ${i}`)).statusCode).toBe(400)
  })
})

describe('enumeration: the limits answer the same for unknown and existing emails', () => {
  /** Statuses, Retry-After and the page (without its per-browser CSRF token and the email) of a run. */
  async function run(email: string) {
    const client = stranger()
    const seen: { status: number; retryAfter: unknown; body: string }[] = []
    for (let i = 0; i < 8; i++) {
      const res = await client.signIn(email, `guess ${i}`)
      seen.push({
        status: res.statusCode,
        retryAfter: res.headers['retry-after'],
        body: res.body.replace(/value="[^"]*"/g, 'value=""'),
      })
      if (res.statusCode === 429 && i % 2 === 1) clock.advance(retryAfter(res))
    }
    return seen
  }

  it('the same statuses, Retry-After values and pages for an existing and an unknown email', async () => {
    const { email } = await seed(t)
    const unknown = `nobody-${addressCounter}@example.com`
    const existing = await run(email)
    const missing = await run(unknown)
    expect(existing.map((s) => s.status)).toEqual([400, 400, 400, 400, 400, 429, 400, 429])
    expect(missing).toEqual(existing)
  })

  it('the account-wide limit holds back an unknown email like an existing one', async () => {
    const { email } = await seed(t)
    const unknown = `nobody-else-${addressCounter}@example.com`
    const answers = async (target: string) => {
      for (let i = 0; i < 20; i++)
        expect((await stranger().signIn(target, `guess ${i}`)).statusCode).toBe(400)
      const held = await stranger().signIn(target, 'guess')
      return { status: held.statusCode, retryAfter: held.headers['retry-after'] }
    }
    const existing = await answers(email)
    const missing = await answers(unknown)
    expect(existing).toEqual({ status: 429, retryAfter: '900' })
    expect(missing).toEqual(existing)
  })
})

describe('lock-out abuse: an attacker hammering an account from many addresses', () => {
  it('holds back unknown clients, lets the user in on a known device, and expires by itself', async () => {
    const { email } = await seed(t)
    // The user signed in on this browser last week: it is a known device of the account.
    const home = stranger()
    expect((await home.signIn(email, PASSWORD)).statusCode).toBe(303)
    expect([...home.jar.cookies.keys()]).toContain('linkauth_device')
    sessionEnds(home)
    clock.advance(7 * 24 * 3600)

    // 20 failures from 20 addresses: the account-wide limit for unknown clients is reached.
    for (let i = 0; i < 20; i++) expect((await stranger().signIn(email, `guess ${i}`)).statusCode).toBe(400)
    const attacker = await stranger().signIn(email, 'guess')
    expect(attacker.statusCode).toBe(429)
    expect(retryAfter(attacker)).toBe(900)
    // The right password from an unknown client is held back too (it cannot be told apart).
    expect((await stranger().signIn(email, PASSWORD)).statusCode).toBe(429)

    // The user's own browser is not affected while the attack goes on.
    expect((await home.signIn(email, PASSWORD)).statusCode).toBe(303)
    for (let i = 0; i < 5; i++) await stranger().signIn(email, `guess ${i}`)
    expect((await sessionEnds(home).signIn(email, PASSWORD)).statusCode).toBe(303)

    // The limit ends with its window: a new device of the user gets in.
    clock.advance(900)
    expect((await stranger().signIn(email, PASSWORD)).statusCode).toBe(303)
  })

  it('a known device has its own growing delay, apart from other clients', async () => {
    const { email } = await seed(t)
    const home = stranger()
    await home.signIn(email, PASSWORD)
    sessionEnds(home)
    for (let i = 0; i < 5; i++) expect((await home.signIn(email, `typo ${i}`)).statusCode).toBe(400)
    expect((await home.signIn(email, PASSWORD)).statusCode).toBe(429)
    // Its failures did not count against the account for everyone else.
    expect((await stranger().signIn(email, PASSWORD)).statusCode).toBe(303)
  })

  it('a known-device cookie of another account, or a forged one, exempts nothing', async () => {
    const victim = await seed(t)
    const mine = await seed(t)
    const attacker = stranger()
    expect((await attacker.signIn(mine.email, PASSWORD)).statusCode).toBe(303) // the attacker's own account
    sessionEnds(attacker)
    for (let i = 0; i < 20; i++) await stranger().signIn(victim.email, `guess ${i}`)
    expect((await attacker.signIn(victim.email, PASSWORD)).statusCode).toBe(429)

    const forged = stranger()
    const signed = attacker.jar.cookies.get('linkauth_device')!
    forged.jar.cookies.set('linkauth_device', signed.replace(/^[^.]+/, 'x'.repeat(43)))
    expect((await forged.signIn(victim.email, PASSWORD)).statusCode).toBe(429)
    clock.advance(900)
  })
})

describe('the 429 sign-in page', () => {
  it('is the sign-in form with an alert saying how long to wait, without the password', async () => {
    const { email } = await seed(t)
    const attacker = stranger()
    for (let i = 0; i < 5; i++) await attacker.signIn(email, `guess ${i}`)
    const before = await rateLimitedCount(t, 'sign_in_delay')
    const res = await attacker.signIn(email, 'secret guess')
    expect(res.statusCode).toBe(429)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.body).toContain(
      '<p class="alert" role="alert">Too many sign-in attempts. Wait 1 second and try again.</p>',
    )
    expect(res.body).toContain('<html lang="en">')
    expect(res.body.match(/<h1/g)).toHaveLength(1)
    expect(res.body).toContain('<label for="password">Password</label>')
    expect(res.body).not.toContain('secret guess')
    expect(res.body).not.toMatch(/<script(?! src="\/static\/passkeys\.js")|at .*\.ts:\d+/)
    expect(await rateLimitedCount(t, 'sign_in_delay')).toBe(before + 1)
  })
})

describe('POST /login per address (SIGN_IN_RATE_LIMIT, default 30 a minute)', () => {
  it('the 31st attempt of a minute from one address gets a 429 page; other addresses do not', async () => {
    const limited = await buildTestApp({ clock, database: t.database })
    try {
      const { email } = await seed(limited)
      const client = new Browser(limited.app, '203.0.113.50')
      const page = await client.get('/login')
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
      // A different email each time: only the per-address limit can hold these back.
      let n = 0
      const post = () =>
        client.post('/login', { email: `spray-${++n}@example.com`, password: 'x', csrf_token: csrf })
      for (let i = 0; i < 30; i++) expect((await post()).statusCode).toBe(400)
      const refused = await post()
      expect(refused.statusCode).toBe(429)
      expect(retryAfter(refused)).toBeGreaterThan(0)
      expect(retryAfter(refused)).toBeLessThanOrEqual(60)
      expect(refused.headers['content-type']).toMatch(/^text\/html/)
      expect(refused.body).toContain('<h1 id="error-title">Too many requests</h1>')
      expect(refused.body).toMatch(/Wait \d+ seconds?, then go back and try again\./)
      expect(refused.body).not.toMatch(/<script|Error:|at .*\.ts:\d+/)
      expect(await rateLimitedCount(limited, 'sign_in')).toBe(1)

      expect((await new Browser(limited.app, '203.0.113.51').signIn(email, PASSWORD)).statusCode).toBe(303)
      clock.advance(60)
      expect((await client.signIn(email, PASSWORD)).statusCode).toBe(303)
    } finally {
      await limited.close()
    }
  })

  it('X-Forwarded-For names the address only with TRUST_PROXY', async () => {
    for (const trustProxy of [false, true]) {
      const app = await buildTestApp({
        clock,
        database: t.database,
        env: { SIGN_IN_RATE_LIMIT: '2', TRUST_PROXY: String(trustProxy) },
      })
      try {
        const post = (forwardedFor: string) =>
          app.app.inject({
            method: 'POST',
            url: '/login',
            remoteAddress: '10.0.0.1',
            headers: { 'x-forwarded-for': forwardedFor, 'content-type': 'application/x-www-form-urlencoded' },
            payload: 'email=a%40example.com&password=x',
          })
        await post('192.0.2.1')
        await post('192.0.2.1')
        // A third from the same proxy: refused when the proxy's address counts, not when the client's does.
        expect((await post('192.0.2.2')).statusCode).toBe(trustProxy ? 403 : 429)
        expect((await post('192.0.2.1')).statusCode).toBe(429)
      } finally {
        await app.close()
      }
    }
  })
})

describe('RATE_LIMITS=false (benchmarks)', () => {
  it('holds nothing back', async () => {
    const open = await buildTestApp({
      clock,
      database: t.database,
      env: { RATE_LIMITS: 'false', SIGN_IN_RATE_LIMIT: '1' },
    })
    try {
      const { email } = await seed(open)
      const client = new Browser(open.app, '203.0.113.60')
      for (let i = 0; i < 8; i++) expect((await client.signIn(email, `guess ${i}`)).statusCode).toBe(400)
      expect((await client.signIn(email, PASSWORD)).statusCode).toBe(303)
    } finally {
      await open.close()
    }
  })
})
