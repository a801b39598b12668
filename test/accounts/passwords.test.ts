import { Writable } from 'node:stream'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { cliAgainst } from '../helpers/cli.js'

/**
 * Users' own passwords (issue 18): the change form on the account pages, and the operator's
 * one-time reset link with the page it opens.
 */
let t: TestApp
let clock: TestClock
let adminUrl: string
const lines: string[] = []

beforeAll(async () => {
  clock = createTestClock()
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  t = await buildTestApp({
    clock,
    logDestination: sink,
    env: { LOG_LEVEL: 'info', SIGN_IN_RATE_LIMIT: '100000', SIGN_IN_FREE_FAILURES: '3' },
  })
  adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t.close())

const NEW_PASSWORD = 'a new and longer password'

async function signedIn(email: string, password = PASSWORD): Promise<Browser> {
  const browser = new Browser(t.app)
  expect((await browser.signIn(email, password)).statusCode).toBe(303)
  return browser
}

async function changePassword(browser: Browser, fields: Record<string, string>) {
  const form = await browser.get('/account/password')
  expect(form.statusCode).toBe(200)
  return browser.post('/account/password', { csrf_token: hiddenField(form.body, 'csrf_token'), ...fields })
}

const stillSignedIn = async (browser: Browser) => (await browser.get('/account/apps')).statusCode === 200

async function resetLink(userId: string): Promise<string> {
  const res = await t.admin.inject({
    method: 'POST',
    url: `/admin/users/${userId}/reset-link`,
    headers: adminHeaders,
  })
  expect(res.statusCode, res.body).toBe(201)
  expect(res.headers['cache-control']).toBe('no-store')
  return res.json().url as string
}

/** Opens a reset link and submits the form; the answer of the POST. */
async function useLink(browser: Browser, url: string, password = NEW_PASSWORD, confirm = password) {
  const { pathname, search } = new URL(url)
  const page = await browser.get(pathname + search)
  expect(page.statusCode, page.body).toBe(200)
  return browser.post(pathname, {
    csrf_token: hiddenField(page.body, 'csrf_token'),
    token: hiddenField(page.body, 'token'),
    new_password: password,
    confirm_password: confirm,
  })
}

const cli = cliAgainst(() => adminUrl)

describe('changing one’s own password', () => {
  it('needs a session: the page sends the visitor to sign in and back', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/account/password' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/login?next=account-password')
    const post = await t.app.inject({ method: 'POST', url: '/account/password', payload: {} })
    expect(post.statusCode).toBe(403)
    expect(post.headers['content-type']).toContain('text/html')
  })

  it('ends every other session of the user, keeps this one, and the new password is the one that works', async () => {
    const s = await seed(t)
    const here = await signedIn(s.email)
    const elsewhere = await signedIn(s.email)
    const res = await changePassword(here, {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.body).toContain('Password changed')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(await stillSignedIn(here)).toBe(true)
    expect(await stillSignedIn(elsewhere)).toBe(false)
    expect((await new Browser(t.app).signIn(s.email, PASSWORD)).statusCode).toBe(400)
    await signedIn(s.email, NEW_PASSWORD)
    const hash = await t.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', s.user.id)
      .executeTakeFirstOrThrow()
    expect(hash.password_hash).toMatch(/^\$argon2id\$/)
    const { events } = (
      await t.admin.inject({
        method: 'GET',
        url: `/admin/audit?user_id=${s.user.id}&type=password.changed`,
        headers: adminHeaders,
      })
    ).json()
    expect(events[0]).toMatchObject({
      actor: { kind: 'user', id: s.user.id },
      details: { other_sessions_ended: 1 },
    })
  })

  it.each([
    [
      'a wrong current password',
      { current_password: 'not it', new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD },
      'The current password is not correct.',
    ],
    [
      'a short new password',
      { current_password: PASSWORD, new_password: 'short', confirm_password: 'short' },
      'at least 8 characters',
    ],
    [
      'two different new passwords',
      { current_password: PASSWORD, new_password: NEW_PASSWORD, confirm_password: `${NEW_PASSWORD}!` },
      'not the same',
    ],
    [
      'a new password over 1024 characters',
      { current_password: PASSWORD, new_password: 'x'.repeat(1025), confirm_password: 'x'.repeat(1025) },
      'at most 1024',
    ],
  ])('refuses %s with the form again (400) and changes nothing', async (_label, fields, message) => {
    const s = await seed(t)
    const browser = await signedIn(s.email)
    const res = await changePassword(browser, fields)
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('role="alert"')
    expect(res.body).toContain(message)
    await signedIn(s.email)
  })

  it('refuses a form without its CSRF token', async () => {
    const s = await seed(t)
    const browser = await signedIn(s.email)
    const res = await browser.post('/account/password', {
      csrf_token: 'forged',
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(res.statusCode).toBe(403)
    await signedIn(s.email)
  })

  it('holds back guessing of the current password like sign-in, counted against the same account', async () => {
    const s = await seed(t)
    const browser = await signedIn(s.email)
    const wrong = { current_password: 'guess', new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }
    for (let i = 0; i < 3; i++) expect((await changePassword(browser, wrong)).statusCode).toBe(400)
    const held = await changePassword(browser, { ...wrong, current_password: PASSWORD })
    expect(held.statusCode).toBe(429)
    expect(held.headers['retry-after']).toBeDefined()
    expect(held.body).toContain('Too many sign-in attempts')
    clock.advance(3600)
  })
})

describe('a one-time reset link', () => {
  it('is a 30-minute https link to the page; only its hash is stored; never in a log line', async () => {
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    const link = new URL(url)
    expect(link.origin + link.pathname).toBe(`${t.config.issuer}/account/reset-password`)
    const token = link.searchParams.get('token')!
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const rows = await t.database.db
      .selectFrom('password_reset_tokens')
      .selectAll()
      .where('user_id', '=', s.user.id)
      .execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.token_hash).toBe(sha256(token))
    expect(rows[0]!.expires_at.getTime() - rows[0]!.created_at.getTime()).toBe(30 * 60 * 1000)
    const res = await useLink(new Browser(t.app), url)
    expect(res.statusCode).toBe(200)
    expect(lines.join('\n')).not.toContain(token)
    const table = await sql<{ row: string }>`select audit_events::text as row from audit_events`.execute(
      t.database.db,
    )
    expect(table.rows.map((r) => r.row).join('\n')).not.toContain(token)
  })

  it('sets the new password, ends every session of the user, and works once', async () => {
    const s = await seed(t)
    const session = await signedIn(s.email)
    const url = await resetLink(s.user.id)
    const browser = new Browser(t.app)
    const res = await useLink(browser, url)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.body).toContain('Password set')
    expect(await stillSignedIn(session)).toBe(false)
    await signedIn(s.email, NEW_PASSWORD)
    // Used: the page says so, and so does a second POST of the same form.
    const { pathname, search } = new URL(url)
    const again = await browser.get(pathname + search)
    expect(again.statusCode).toBe(400)
    expect(again.body).toContain('This link no longer works')
    const types = (
      await t.admin.inject({
        method: 'GET',
        url: `/admin/audit?user_id=${s.user.id}&type=password.reset,password.reset_link_issued`,
        headers: adminHeaders,
      })
    )
      .json()
      .events.map((e: { type: string }) => e.type)
    expect(types.slice(0, 2)).toEqual(['password.reset', 'password.reset_link_issued'])
  })

  it('two uses at once: exactly one sets its password', async () => {
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    const { pathname, search } = new URL(url)
    const browsers = [new Browser(t.app), new Browser(t.app)]
    const pages = await Promise.all(browsers.map((b) => b.get(pathname + search)))
    const answers = await Promise.all(
      browsers.map((b, i) =>
        b.post(pathname, {
          csrf_token: hiddenField(pages[i]!.body, 'csrf_token'),
          token: hiddenField(pages[i]!.body, 'token'),
          new_password: `${NEW_PASSWORD} ${i}`,
          confirm_password: `${NEW_PASSWORD} ${i}`,
        }),
      ),
    )
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400])
    const winner = answers.findIndex((a) => a.statusCode === 200)
    await signedIn(s.email, `${NEW_PASSWORD} ${winner}`)
    expect((await new Browser(t.app).signIn(s.email, `${NEW_PASSWORD} ${1 - winner}`)).statusCode).toBe(400)
  })

  it('expires after 30 minutes', async () => {
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    clock.advance(30 * 60 + 1)
    const { pathname, search } = new URL(url)
    expect((await new Browser(t.app).get(pathname + search)).statusCode).toBe(400)
  })

  it('a password change voids links issued before it; so does a reset the other links', async () => {
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    const browser = await signedIn(s.email)
    const res = await changePassword(browser, {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(res.statusCode).toBe(200)
    const { pathname, search } = new URL(url)
    expect((await new Browser(t.app).get(pathname + search)).statusCode).toBe(400)
  })

  it('refuses a short password with the form again, and the link still works after', async () => {
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    const res = await useLink(new Browser(t.app), url, 'short')
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('at least 8 characters')
    expect((await useLink(new Browser(t.app), url)).statusCode).toBe(200)
  })

  it('refuses unknown, malformed and missing tokens, and a form without its CSRF cookie', async () => {
    for (const query of ['', '?token=nope', `?token=${'A'.repeat(43)}`]) {
      const res = await t.app.inject({ method: 'GET', url: `/account/reset-password${query}` })
      expect(res.statusCode, query).toBe(400)
      expect(res.headers['content-type']).toContain('text/html')
    }
    const s = await seed(t)
    const url = await resetLink(s.user.id)
    const res = await t.app.inject({
      method: 'POST',
      url: '/account/reset-password',
      payload: {
        token: new URL(url).searchParams.get('token')!,
        new_password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      },
    })
    expect(res.statusCode).toBe(403)
  })

  it('linkauth users reset-link --email finds the user in any case and prints the link once', async () => {
    const s = await seed(t)
    const shown = await cli(['users', 'reset-link', '--email', s.email.toUpperCase()])
    expect(shown.code, shown.err).toBe(0)
    const url = shown.out.split('\n')[0]!
    expect(url).toMatch(/\/account\/reset-password\?token=/)
    expect((await useLink(new Browser(t.app), url)).statusCode).toBe(200)
    const json = await cli(['users', 'reset-link', '--id', s.user.id, '--json'])
    expect(JSON.parse(json.out)).toMatchObject({ user_id: s.user.id, expires_at: expect.any(String) })
    expect((await cli(['users', 'reset-link', '--email', 'nobody@example.com'])).code).toBe(1)
    expect((await cli(['users', 'reset-link'])).code).toBe(2)
    expect((await cli(['users', 'reset-link', '--help'])).out).toContain('--email')
  })
})

describe('per address, with sign-in', () => {
  it('the password forms share SIGN_IN_RATE_LIMIT per address with POST /login', async () => {
    const limited = await buildTestApp({ clock, database: t.database, env: { SIGN_IN_RATE_LIMIT: '2' } })
    try {
      const post = (url: string) =>
        limited.app.inject({ method: 'POST', url, remoteAddress: '192.0.2.77', payload: {} })
      expect((await post('/login')).statusCode).toBe(403)
      expect((await post('/account/reset-password')).statusCode).toBe(403)
      const refused = await post('/account/password')
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['content-type']).toMatch(/^text\/html/)
    } finally {
      await limited.close()
    }
  })
})

describe('sign-in lockout', () => {
  it('is recorded once, when the hold begins', async () => {
    const s = await seed(t)
    const browser = new Browser(t.app, '203.0.113.9')
    for (let i = 0; i < 5; i++) await browser.signIn(s.email, `wrong ${i}`)
    const { events } = (
      await t.admin.inject({
        method: 'GET',
        url: `/admin/audit?user_id=${s.user.id}&type=sign_in.locked`,
        headers: adminHeaders,
      })
    ).json()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ client_address: '203.0.113.9', details: { limit: 'sign_in_delay' } })
    clock.advance(3600)
  })
})
