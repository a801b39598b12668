import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField } from '../helpers/browser.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createParty, exchangeCode, type Party } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

/** The password createParty gives its users. */
const PASSWORD = 'correct horse battery'

let t: TestApp
let clock: TestClock
let rs: ResourceServerCredentials
beforeAll(async () => {
  clock = createTestClock(new Date('2026-03-01T12:00:00Z'))
  t = await buildTestApp({ clock })
  rs = await createResourceServer(t)
})
afterAll(async () => {
  await t.close()
})

/** A user with a grant to one client, signed in in a browser. */
async function signedInParty(options: { clientName?: string } = {}) {
  const party = await createParty(t)
  if (options.clientName)
    await t.database.db
      .updateTable('clients')
      .set({ name: options.clientName })
      .where('id', '=', party.client.id)
      .execute()
  const user = await t.services.users.findUser(party.userId)
  const browser = new Browser(t.app)
  const res = await browser.signIn(user!.email, PASSWORD)
  expect(res.statusCode).toBe(303)
  return { party, browser, email: user!.email }
}

async function grantIsLive(party: Party) {
  return (await t.services.grants.findLiveGrant(party.userId, party.client.id)) !== undefined
}

describe('GET /account/apps', () => {
  it('sends a visitor through sign-in and back to /account/apps', async () => {
    const party = await createParty(t)
    const user = await t.services.users.findUser(party.userId)
    const browser = new Browser(t.app)
    const first = await browser.get('/account/apps')
    expect(first.statusCode).toBe(303)
    expect(first.headers.location).toBe('/login?next=account-apps')
    const login = await browser.get('/login?next=account-apps')
    expect(hiddenField(login.body, 'next')).toBe('account-apps')
    const signedIn = await browser.post('/login', {
      email: user!.email,
      password: PASSWORD,
      csrf_token: hiddenField(login.body, 'csrf_token'),
      next: 'account-apps',
    })
    expect(signedIn.statusCode).toBe(303)
    expect(signedIn.headers.location).toBe('/account/apps')
    expect((await browser.get('/account/apps')).statusCode).toBe(200)
    // The signed-in page links here; already signed in, /login?next=… goes straight here.
    expect((await browser.get('/login')).body).toContain('<a href="/account/apps">')
    expect((await browser.get('/login?next=account-apps')).headers.location).toBe('/account/apps')
  })

  it.each(['https://evil.example/', '//evil.example', '/admin', 'constructor', '__proto__'])(
    'never follows a next it does not know (%s)',
    async (next) => {
      const party = await createParty(t)
      const user = await t.services.users.findUser(party.userId)
      const browser = new Browser(t.app)
      const login = await browser.get(`/login?next=${encodeURIComponent(next)}`)
      expect(login.body).not.toContain('name="next"')
      const res = await browser.post('/login', {
        email: user!.email,
        password: PASSWORD,
        csrf_token: hiddenField(login.body, 'csrf_token'),
        next,
      })
      expect(res.headers.location).toBe('/login')
    },
  )

  it('lists each app with its scopes in plain words, first authorized and last used', async () => {
    const { party, browser } = await signedInParty()
    const before = await browser.get('/account/apps')
    expect(before.statusCode).toBe(200)
    expect(before.headers['cache-control']).toBe('no-store')
    expect(before.body).toContain('<h1 id="title">Connected applications</h1>')
    expect(before.body).toContain('<h2><span class="app-name">Fixture App</span></h2>')
    expect(before.body).toContain('data-standing="verified"')
    expect(before.body).toContain('Read your short links, tags and statistics')
    expect(before.body).toContain('Create, modify and delete your short links')
    expect(before.body).toContain('<dt>First authorized</dt>')
    expect(before.body).toContain('<time datetime="2026-03-01T12:00:00.000Z">2026-03-01 12:00 UTC</time>')
    expect(before.body).toMatch(/<dt>Last used<\/dt>\s*<dd>never<\/dd>/)
    expect(before.body).toContain('aria-label="Revoke Fixture App">Revoke</button>')
    expect(before.body).toContain(`action="/account/apps/${party.client.id}/revoke"`)

    clock.advance(3600)
    await exchangeCode(t, party)
    const after = await browser.get('/account/apps')
    expect(after.body).toMatch(/<dt>Last used<\/dt>\s*<dd><time datetime="2026-03-01T13:00:00.000Z">/)
    clock.advance(-3600)
  })

  it('says when no application is connected', async () => {
    const { party, browser } = await signedInParty()
    await t.services.connectedApps.revoke(party.userId, party.client.id)
    const page = await browser.get('/account/apps')
    expect(page.body).toContain('No application is connected to your account.')
    expect(page.body).not.toContain('Revoke')
  })

  it('escapes application names', async () => {
    const { browser } = await signedInParty({ clientName: '<script>alert(1)</script>' })
    const page = await browser.get('/account/apps')
    expect(page.body).not.toContain('<script>')
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })

  it('ignores a revoked= value that names no application', async () => {
    const { browser } = await signedInParty()
    for (const value of ['no-such-client-id', '<b>hi</b>', 'x'.repeat(300)]) {
      const page = await browser.get(`/account/apps?revoked=${encodeURIComponent(value)}`)
      expect(page.statusCode).toBe(200)
      expect(page.body).not.toContain('role="status"')
    }
  })

  it('says "You revoked access" only for a grant this user had and revoked, never for any other app', async () => {
    const { party, browser } = await signedInParty()
    const stranger = await createParty(t) // another user's app, registered and live
    const notice = async (clientId: string) =>
      (await browser.get(`/account/apps?revoked=${clientId}`)).body.includes('You revoked access for')
    expect(await notice(stranger.client.id)).toBe(false)
    expect(await notice(party.client.id)).toBe(false) // still live: nothing was revoked
    await t.services.grants.revokeForUser(party.userId, party.client.id)
    expect(await notice(party.client.id)).toBe(true)
    // Another user who revoked their own grant to the stranger app changes nothing for this one.
    await t.services.grants.revokeForUser(stranger.userId, stranger.client.id)
    expect(await notice(stranger.client.id)).toBe(false)
  })
})

describe('POST /account/apps/:client_id/revoke', () => {
  it('revokes, says so, and the entry is gone', async () => {
    const { party, browser } = await signedInParty({ clientName: 'Shop & <Sync>' })
    const tokens = await exchangeCode(t, party)
    const page = await browser.get('/account/apps')
    const res = await browser.post(`/account/apps/${party.client.id}/revoke`, {
      csrf_token: hiddenField(page.body, 'csrf_token'),
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(`/account/apps?revoked=${party.client.id}`)
    const after = await browser.get(res.headers.location as string)
    expect(after.body).toContain('You revoked access for <strong>Shop &amp; &lt;Sync&gt;</strong>')
    expect(after.body).not.toContain('aria-label="Revoke')
    expect(await grantIsLive(party)).toBe(false)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    // A second click finds nothing to revoke and lands on the list.
    const again = await browser.post(`/account/apps/${party.client.id}/revoke`, {
      csrf_token: hiddenField(page.body, 'csrf_token'),
    })
    expect(again.headers.location).toBe('/account/apps')
  })

  it('refuses a missing or foreign CSRF token, and a visitor who is not signed in', async () => {
    const { party, browser } = await signedInParty()
    const other = await signedInParty()
    const foreign = hiddenField((await other.browser.get('/account/apps')).body, 'csrf_token')
    const url = `/account/apps/${party.client.id}/revoke`
    expect((await browser.post(url, {})).statusCode).toBe(403)
    expect((await browser.post(url, { csrf_token: foreign })).statusCode).toBe(403)
    const anonymous = new Browser(t.app)
    expect((await anonymous.post(url, { csrf_token: foreign })).statusCode).toBe(403)
    expect(await grantIsLive(party)).toBe(true)
  })
})

describe('JSON API', () => {
  const list = (browser: Browser) =>
    t.app.inject({ method: 'GET', url: '/api/account/apps', headers: { cookie: browser.jar.header() } })
  const remove = (browser: Browser, clientId: string, csrf?: string) =>
    t.app.inject({
      method: 'DELETE',
      url: `/api/account/apps/${encodeURIComponent(clientId)}`,
      headers: { cookie: browser.jar.header(), ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }) },
    })
  function expectProblem(res: Awaited<ReturnType<typeof list>>, status: number) {
    expect(res.statusCode).toBe(status)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toMatchObject({ status })
  }

  it('lists the apps with a CSRF token', async () => {
    const { party, browser } = await signedInParty()
    const res = await list(browser)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({
      apps: [
        {
          client_id: party.client.id,
          name: 'Fixture App',
          scopes: [
            { scope: 'links:read', description: 'Read your short links, tags and statistics' },
            { scope: 'links:write', description: 'Create, modify and delete your short links' },
          ],
          resources: [],
          description: null,
          homepage_url: null,
          privacy_policy_url: null,
          terms_url: null,
          authorized_at: party.grant.createdAt.toISOString(),
          last_used_at: null,
          standing: 'verified',
          standing_label: 'Verified',
          host: new URL(party.client.redirectUris[0]!).host,
          connected: false,
          state: 'signed_out',
          on_another_device: false,
        },
      ],
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
  })

  it('401 without a session', async () => {
    const anonymous = new Browser(t.app)
    expectProblem(await list(anonymous), 401)
    expectProblem(await remove(anonymous, 'whatever-client', 'x'), 401)
  })

  it('DELETE revokes (204), then 404; the CSRF header is required and must be this session’s', async () => {
    const { party, browser } = await signedInParty()
    const other = await signedInParty()
    const csrf = (await list(browser)).json().csrf_token
    const foreign = (await list(other.browser)).json().csrf_token
    expectProblem(await remove(browser, party.client.id), 403)
    expectProblem(await remove(browser, party.client.id, 'wrong'), 403)
    expectProblem(await remove(browser, party.client.id, foreign), 403)
    expect(await grantIsLive(party)).toBe(true)
    const res = await remove(browser, party.client.id, csrf)
    expect(res.statusCode).toBe(204)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(await grantIsLive(party)).toBe(false)
    expectProblem(await remove(browser, party.client.id, csrf), 404)
    expect((await list(browser)).json().apps).toEqual([])
  })

  it('404 for an unknown client, a malformed id, and another user’s grant (which stays)', async () => {
    const { browser } = await signedInParty()
    const other = await signedInParty()
    const csrf = (await list(browser)).json().csrf_token
    expectProblem(await remove(browser, 'no-such-client-id', csrf), 404)
    expectProblem(await remove(browser, 'bad id \u0000', csrf), 404)
    expectProblem(await remove(browser, other.party.client.id, csrf), 404)
    expect(await grantIsLive(other.party)).toBe(true)
  })

  it('a database failure during revocation answers 503 and revokes nothing', async () => {
    const { party, browser } = await signedInParty()
    await exchangeCode(t, party)
    const csrf = (await list(browser)).json().csrf_token
    // The second statement of the transaction (the families) fails as if the connection broke.
    await sql`create or replace function linkauth_test_fail() returns trigger language plpgsql as $$
      begin raise exception 'connection lost' using errcode = '08006'; end $$`.execute(t.database.db)
    await sql`create trigger linkauth_test_fail before update on refresh_families
      for each row execute function linkauth_test_fail()`.execute(t.database.db)
    try {
      const res = await remove(browser, party.client.id, csrf)
      expect(res.statusCode).toBe(503)
      const page = await browser.post(`/account/apps/${party.client.id}/revoke`, { csrf_token: csrf })
      expect(page.statusCode).toBe(503)
      expect(page.headers.location).toBeUndefined()
    } finally {
      await sql`drop trigger linkauth_test_fail on refresh_families`.execute(t.database.db)
    }
    expect(await grantIsLive(party)).toBe(true)
  })
})
