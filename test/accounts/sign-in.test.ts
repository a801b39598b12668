import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'

const clock = createTestClock(new Date('2026-03-01T10:00:00.000Z'))
let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp({ clock })
  s = await seed(t)
})
afterAll(async () => t.close())

function setCookies(res: { headers: Record<string, unknown> }): string[] {
  const header = res.headers['set-cookie']
  return header === undefined ? [] : Array.isArray(header) ? header : [String(header)]
}

describe('GET /login', () => {
  it('shows a form with labelled Email and Password and a Sign in button', async () => {
    const res = await t.app.inject({ url: '/login' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.body).toContain('<label for="email">Email</label>')
    expect(res.body).toMatch(/<input\s+id="email"\s+name="email"\s+type="email"/)
    expect(res.body).toContain('<label for="password">Password</label>')
    expect(res.body).toMatch(/<input id="password" name="password" type="password"/)
    expect(res.body).toContain('<button type="submit" class="primary">Sign in</button>')
    expect(res.body.match(/<h1/g)).toHaveLength(1)
    expect(res.body).not.toMatch(/<script(?! src="\/static\/passkeys\.js" defer><\/script>)|style=/)
  })

  it('sends the security headers and no-store', async () => {
    const res = await t.app.inject({ url: '/login' })
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(res.headers['content-security-policy']).toContain("form-action 'self'")
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
  })

  it('names the application when continuing a request', async () => {
    const browser = new Browser(t.app)
    const started = await browser.get(authorizeUrl(s.params))
    const res = await browser.get(started.headers.location as string)
    expect(res.body).toContain('to continue to <strong class="app-name">Link App</strong>')
    expect(res.headers['content-security-policy']).toContain("form-action 'self' https://app.example;")
  })

  it('an unknown or malformed request id → 400 page', async () => {
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', '<x>']) {
      const res = await t.app.inject({ url: `/login?request=${encodeURIComponent(id)}` })
      expect(res.statusCode).toBe(400)
      expect(res.body).not.toContain('<x>')
    }
  })
})

describe('POST /login', () => {
  it('signs in: 303 to a local page, a hashed session with a bounded lifetime, cookie flags', async () => {
    const browser = new Browser(t.app)
    const res = await browser.signIn(s.email, PASSWORD)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/login')
    const cookie = setCookies(res).find((c) => c.startsWith('linkauth_session='))!
    expect(cookie).toMatch(
      /^linkauth_session=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/,
    )
    const token = browser.jar.cookies.get('linkauth_session')!
    const row = await t.database.db
      .selectFrom('sign_in_sessions')
      .selectAll()
      .where('token_hash', '=', sha256(token))
      .executeTakeFirstOrThrow()
    expect(row.user_id).toBe(s.user.id)
    expect(row.expires_at.getTime()).toBe(clock.now().getTime() + 12 * 3600 * 1000)
    const rows = await t.database.db.selectFrom('sign_in_sessions').select('token_hash').execute()
    expect(rows.map((r) => r.token_hash)).not.toContain(token)

    const page = await browser.get('/login')
    expect(page.body).toContain(`Signed in as <strong>${s.email}</strong>`)
  })

  it('accepts the email in another case', async () => {
    const res = await new Browser(t.app).signIn(s.email.toUpperCase(), PASSWORD)
    expect(res.statusCode).toBe(303)
  })

  it('unknown email and wrong password: same status, same message, no session', async () => {
    const wrong = await new Browser(t.app).signIn(s.email, 'wrong password')
    const unknown = await new Browser(t.app).signIn('nobody@example.com', PASSWORD)
    const empty = await new Browser(t.app).signIn('', '')
    for (const res of [wrong, unknown, empty]) {
      expect(res.statusCode).toBe(400)
      expect(res.body).toContain('<p class="alert" role="alert">Email or password is incorrect</p>')
      expect(setCookies(res).some((c) => c.includes('linkauth_session='))).toBe(false)
    }
    const strip = (body: string) => body.replace(/value="[^"]*"/g, '')
    expect(strip(wrong.body)).toBe(strip(unknown.body))
  })

  it('never follows a return_to URL (no open redirect)', async () => {
    const browser = new Browser(t.app)
    const page = await browser.get('/login?return_to=https://evil.example/')
    const res = await browser.post('/login?return_to=https://evil.example/', {
      email: s.email,
      password: PASSWORD,
      csrf_token: hiddenField(page.body, 'csrf_token'),
      return_to: 'https://evil.example/',
      next: '//evil.example',
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/login')
  })

  it('refuses a form without the sign-in CSRF cookie and field (login CSRF) → 403', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: s.email, password: PASSWORD }).toString(),
    })
    expect(res.statusCode).toBe(403)
    expect(setCookies(res)).toEqual([])
  })

  it('refuses a forged login CSRF pair: cookie and field equal, or the field of another cookie → 403', async () => {
    const post = (cookie: string, field: string) =>
      t.app.inject({
        method: 'POST',
        url: '/login',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `linkauth_login_csrf=${cookie}`,
        },
        payload: new URLSearchParams({ email: s.email, password: PASSWORD, csrf_token: field }).toString(),
      })
    // An attacker who can plant a cookie (an http issuer, a sibling host) picks both values.
    const forged = randomToken()
    const res = await post(forged, forged)
    expect(res.statusCode).toBe(403)
    expect(setCookies(res)).toEqual([])
    // A genuine field fits only its own cookie.
    const page = await new Browser(t.app).get('/login')
    const field = hiddenField(page.body, 'csrf_token')
    expect(field).not.toBe(page.headers['set-cookie']?.toString().split(';')[0]!.split('=')[1])
    expect((await post(forged, field)).statusCode).toBe(403)
  })

  it('a session ends after SESSION_TTL', async () => {
    const browser = new Browser(t.app)
    await browser.signIn(s.email, PASSWORD)
    clock.advance(12 * 3600)
    const page = await browser.get('/login')
    expect(page.body).toContain('<label for="email">Email</label>')
  })
})

describe('POST /logout', () => {
  it('needs the CSRF token of the session', async () => {
    const browser = new Browser(t.app)
    await browser.signIn(s.email, PASSWORD)
    const missing = await browser.post('/logout', {})
    expect(missing.statusCode).toBe(403)
    const wrong = await browser.post('/logout', { csrf_token: 'x'.repeat(43) })
    expect(wrong.statusCode).toBe(403)
    expect((await browser.get('/login')).body).toContain('Signed in as')
  })

  it('ends the session and clears the cookie', async () => {
    const browser = new Browser(t.app)
    await browser.signIn(s.email, PASSWORD)
    const token = browser.jar.cookies.get('linkauth_session')!
    const page = await browser.get('/login')
    const res = await browser.post('/logout', { csrf_token: hiddenField(page.body, 'csrf_token') })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/login')
    expect(setCookies(res).find((c) => c.startsWith('linkauth_session='))).toMatch(/Expires=Thu, 01 Jan 1970/)
    const row = await t.database.db
      .selectFrom('sign_in_sessions')
      .select('id')
      .where('token_hash', '=', sha256(token))
      .executeTakeFirst()
    expect(row).toBeUndefined()
  })
})

describe('on an https issuer', () => {
  it('sets __Host- cookies with Secure', async () => {
    const https = await buildTestApp({ env: { ISSUER: 'https://auth.example' }, database: t.database, clock })
    try {
      const browser = new Browser(https.app)
      const page = await browser.get('/login')
      expect(setCookies(page)[0]).toMatch(
        /^__Host-linkauth_login_csrf=[^;]+; Max-Age=3600; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
      )
      const res = await browser.signIn(s.email, PASSWORD)
      const cookie = setCookies(res).find((c) => c.startsWith('__Host-linkauth_session='))
      expect(cookie).toMatch(/; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
    } finally {
      await https.app.close()
      await https.admin.close()
    }
  })

  it('and no Secure on http', async () => {
    const page = await t.app.inject({ url: '/login' })
    expect(setCookies(page)[0]).not.toContain('Secure')
  })
})
