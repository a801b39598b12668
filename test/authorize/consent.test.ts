import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import {
  authorizeUrl,
  Browser,
  CHALLENGE,
  countRows,
  hiddenField,
  locationParams,
  PASSWORD,
  REDIRECT_URI,
  seed,
} from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { expectInvariants } from '../helpers/invariants.js'

const clock = createTestClock(new Date('2026-03-01T10:00:00.000Z'))
let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
let other: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  // One test address makes more authorize requests than a person does in a minute.
  t = await buildTestApp({ clock, env: GENEROUS_LIMITS })
  s = await seed(t)
  other = await seed(t)
})
afterAll(async () => t.close())
beforeEach(async () => {
  // Each test starts with no grant and no code (users and clients stay).
  await t.database.db.deleteFrom('authorization_codes').execute()
  await t.database.db.deleteFrom('grants').execute()
})

const requestIdOf = (location: unknown) => new URL(String(location), 'http://x').searchParams.get('request')!

/** Starts a request, signs in, and lands on what follows (the consent page, or a redirect). */
async function signInAndStart(params: Record<string, string> = s.params, email = s.email) {
  const browser = new Browser(t.app)
  const started = await browser.get(authorizeUrl(params))
  expect(started.statusCode).toBe(303)
  const requestId = requestIdOf(started.headers.location)
  const signedIn = await browser.signIn(email, PASSWORD, requestId)
  expect(signedIn.statusCode).toBe(303)
  expect(signedIn.headers.location).toBe(`/oauth/authorize/continue?request=${requestId}`)
  const next = await browser.get(signedIn.headers.location as string)
  return { browser, requestId, next }
}

async function consentPage(params: Record<string, string> = s.params) {
  const started = await signInAndStart(params)
  expect(started.next.statusCode).toBe(200)
  return { ...started, csrf: hiddenField(started.next.body, 'csrf_token') }
}

describe('the consent page', () => {
  it('names the application, the scopes in plain words and the user; Allow and Deny; no-store', async () => {
    const { next } = await consentPage()
    expect(next.headers['content-type']).toMatch(/^text\/html/)
    expect(next.headers['cache-control']).toBe('no-store')
    expect(next.body).toMatch(/<h1[^>]*><span class="app-title"><span class="app-name">Link App<\/span>/)
    expect(next.body.match(/<h1/g)).toHaveLength(1)
    expect(next.body).toContain('Read your short links, tags and statistics')
    expect(next.body).toContain('Create, modify and delete your short links')
    expect(next.body).not.toContain('Synchronise your product catalogue')
    expect(next.body).toContain(`Signed in as <strong>${s.email}</strong>`)
    expect(next.body).toContain('>Allow</button>')
    expect(next.body).toContain('>Deny</button>')
    expect(next.body).toContain('>Switch account</button>')
    expect(next.body).toContain('<form method="post" action="/oauth/authorize">')
    expect(next.body).not.toMatch(/<script|style=/)
  })

  it('sends the security headers; form-action allows only this redirect origin', async () => {
    const { next } = await consentPage()
    expect(next.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self' https://app.example; frame-ancestors 'none'; base-uri 'none'",
    )
    expect(next.headers['x-frame-options']).toBe('DENY')
    expect(next.headers['referrer-policy']).toBe('no-referrer')
    expect(next.headers['x-content-type-options']).toBe('nosniff')
  })

  it('escapes the application name', async () => {
    const evil = await t.services.clients.createClient({
      name: '<img src=x onerror=alert(1)>',
      redirect_uris: [REDIRECT_URI],
    })
    const { next } = await consentPage({ ...s.params, client_id: evil.id })
    expect(next.body).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(next.body).not.toContain('<img src=x')
  })

  it('GET never grants anything', async () => {
    const { browser, requestId } = await consentPage()
    await browser.get(`/oauth/authorize/continue?request=${requestId}`)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })
})

describe('Allow and Deny', () => {
  it('Allow: one grant, one code bound to everything, expiring 60 s later; 303 with code, state, iss', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toMatch(
      /^https:\/\/app\.example\/callback\?code=[A-Za-z0-9_-]{43}&state=xyz-state&iss=/,
    )
    const params = locationParams(res)
    expect(params).toEqual({ code: params.code, state: 'xyz-state', iss: 'http://localhost:3000' })

    const grant = await t.database.db.selectFrom('grants').selectAll().executeTakeFirstOrThrow()
    expect(grant).toMatchObject({
      user_id: s.user.id,
      client_id: s.client.id,
      scopes: ['links:read', 'links:write'],
      revoked_at: null,
    })
    const code = await t.database.db.selectFrom('authorization_codes').selectAll().executeTakeFirstOrThrow()
    expect(code).toMatchObject({
      code_hash: sha256(params.code!),
      client_id: s.client.id,
      user_id: s.user.id,
      grant_id: grant.id,
      redirect_uri: REDIRECT_URI,
      scopes: ['links:read', 'links:write'],
      code_challenge: CHALLENGE,
      consumed_at: null,
    })
    expect(code.created_at.toISOString()).toBe(clock.now().toISOString())
    expect(code.expires_at.getTime()).toBe(clock.now().getTime() + 60_000)
    expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })
  })

  it('Deny: access_denied with state and iss; nothing granted', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'deny',
    })
    expect(res.statusCode).toBe(303)
    expect(locationParams(res)).toMatchObject({
      error: 'access_denied',
      state: 'xyz-state',
      iss: 'http://localhost:3000',
    })
    expect(res.headers.location).toMatch(/^https:\/\/app\.example\/callback\?error=access_denied&/)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('a decision other than allow or deny → 400, nothing granted', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'maybe',
    })
    expect(res.statusCode).toBe(400)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('widens the existing grant instead of adding one', async () => {
    const first = await consentPage({ ...s.params, scope: 'links:read' })
    await first.browser.post('/oauth/authorize', {
      request: first.requestId,
      csrf_token: first.csrf,
      decision: 'allow',
    })
    const second = await consentPage({ ...s.params, scope: 'products:sync' })
    expect(second.next.body).toContain('Synchronise your product catalogue')
    await second.browser.post('/oauth/authorize', {
      request: second.requestId,
      csrf_token: second.csrf,
      decision: 'allow',
    })
    const grants = await t.database.db.selectFrom('grants').selectAll().execute()
    expect(grants).toHaveLength(1)
    expect([...grants[0]!.scopes].sort()).toEqual(['links:read', 'products:sync'])
    expect(await countRows(t)).toEqual({ grants: 1, codes: 2 })
  })

  it('a client disabled while the page was open → 400 page, nothing granted', async () => {
    const temp = await t.services.clients.createClient({ name: 'Temp', redirect_uris: [REDIRECT_URI] })
    const { browser, requestId, csrf } = await consentPage({ ...s.params, client_id: temp.id })
    await t.services.clients.disableClient(temp.id)
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('an expired pending request (after 10 minutes) → readable 403 page, nothing granted', async () => {
    const { browser, requestId, csrf } = await consentPage()
    clock.advance(601)
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(res.body).toContain('expired')
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
    const again = await browser.get(`/oauth/authorize/continue?request=${requestId}`)
    expect(again.statusCode).toBe(400)
  })
})

describe('CSRF on the consent form → 403 and nothing granted', () => {
  it('missing', async () => {
    const { browser, requestId } = await consentPage()
    const res = await browser.post('/oauth/authorize', { request: requestId, decision: 'allow' })
    expect(res.statusCode).toBe(403)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('wrong', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const wrong = `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: wrong,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('from another session of the same user', async () => {
    const mine = await consentPage()
    const theirs = await consentPage()
    const res = await mine.browser.post('/oauth/authorize', {
      request: theirs.requestId,
      csrf_token: theirs.csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it("from another user's session", async () => {
    const victim = await consentPage()
    const attacker = await signInAndStart(s.params, other.email)
    const attackerCsrf = hiddenField(attacker.next.body, 'csrf_token')
    const res = await victim.browser.post('/oauth/authorize', {
      request: attacker.requestId,
      csrf_token: attackerCsrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('for another pending request of the same session', async () => {
    const { browser, csrf } = await consentPage()
    const second = await browser.get(authorizeUrl(s.params))
    expect(second.statusCode).toBe(200)
    const secondId = hiddenField(second.body, 'request')
    const res = await browser.post('/oauth/authorize', {
      request: secondId,
      csrf_token: csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('without a session cookie', async () => {
    const { requestId, csrf } = await consentPage()
    const res = await new Browser(t.app).post('/oauth/authorize', {
      request: requestId,
      csrf_token: csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('replayed after use: 403, still one grant and one code', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const form = { request: requestId, csrf_token: csrf, decision: 'allow' }
    expect((await browser.post('/oauth/authorize', form)).statusCode).toBe(303)
    const replay = await browser.post('/oauth/authorize', form)
    expect(replay.statusCode).toBe(403)
    expect(replay.headers.location).toBeUndefined()
    expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })
  })

  it('double submit at the same time: one code, one grant; the loser gets a page', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const form = { request: requestId, csrf_token: csrf, decision: 'allow' }
    const answers = await Promise.all([
      browser.post('/oauth/authorize', form),
      browser.post('/oauth/authorize', form),
    ])
    expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 403])
    expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })
    await expectInvariants(t.database.db)
  })

  it('ten submits of one form at once: one code; ten tabs answered at once: one grant, ten codes', async () => {
    const { browser, requestId, csrf } = await consentPage()
    const form = { request: requestId, csrf_token: csrf, decision: 'allow' }
    const same = await Promise.all(Array.from({ length: 10 }, () => browser.post('/oauth/authorize', form)))
    expect(same.map((r) => r.statusCode).sort()).toEqual([303, ...Array<number>(9).fill(403)])
    expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })

    // The same user with ten consent pages open (each its own request), each asking for more.
    await t.database.db.deleteFrom('authorization_codes').execute()
    await t.database.db.deleteFrom('grants').execute()
    const tabs = await Promise.all(
      ['links:read', 'links:write', 'ecommerce:write', 'products:sync', 'links:read links:write'].flatMap(
        (scope) => [0, 1].map(() => consentPage({ ...s.params, scope })),
      ),
    )
    const answers = await Promise.all(
      tabs.map((tab) =>
        tab.browser.post('/oauth/authorize', {
          request: tab.requestId,
          csrf_token: tab.csrf,
          decision: 'allow',
        }),
      ),
    )
    expect(answers.map((r) => r.statusCode)).toEqual(Array(10).fill(303))
    expect(await countRows(t)).toEqual({ grants: 1, codes: 10 })
    const grant = await t.database.db.selectFrom('grants').select('scopes').executeTakeFirstOrThrow()
    // Every approval widened the one grant; none was lost to a concurrent one.
    expect(grant.scopes).toEqual(['ecommerce:write', 'links:read', 'links:write', 'products:sync'])
    await expectInvariants(t.database.db)
  })
})

describe('remembered consent and prompt', () => {
  async function approve(params: Record<string, string> = s.params) {
    const page = await consentPage(params)
    const res = await page.browser.post('/oauth/authorize', {
      request: page.requestId,
      csrf_token: page.csrf,
      decision: 'allow',
    })
    expect(res.statusCode).toBe(303)
    return page.browser
  }

  it('skips the page when the grant covers every requested scope (same or fewer, any order)', async () => {
    const browser = await approve()
    for (const scope of ['links:read links:write', 'links:write links:read', 'links:read']) {
      const res = await browser.get(authorizeUrl({ ...s.params, scope }))
      expect(res.statusCode).toBe(302)
      expect(locationParams(res)).toMatchObject({ state: 'xyz-state', iss: 'http://localhost:3000' })
      expect(locationParams(res).code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    }
    expect(await countRows(t)).toEqual({ grants: 1, codes: 4 })
  })

  it('asks again for a scope not yet granted', async () => {
    const browser = await approve({ ...s.params, scope: 'links:read' })
    const res = await browser.get(authorizeUrl({ ...s.params, scope: 'links:read ecommerce:write' }))
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Manage your e-commerce links')
  })

  it('asks again after the grant is revoked', async () => {
    const browser = await approve()
    await t.services.grants.revokeAllForClient(s.client.id)
    const res = await browser.get(authorizeUrl(s.params))
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('>Allow</button>')
  })

  it('prompt=consent shows the page even when covered', async () => {
    const browser = await approve()
    const res = await browser.get(authorizeUrl({ ...s.params, prompt: 'consent' }))
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('>Allow</button>')
    expect(await countRows(t)).toEqual({ grants: 1, codes: 1 })
  })

  it('a client registered for fewer scopes than its grant since: the dropped scope → invalid_scope, no code', async () => {
    const browser = await approve()
    await t.database.db
      .updateTable('clients')
      .set({ scopes: ['links:read'] })
      .where('id', '=', s.client.id)
      .execute()
    try {
      const codesBefore = (await countRows(t)).codes
      const refused = await browser.get(authorizeUrl(s.params))
      expect(refused.statusCode).toBe(302)
      expect(locationParams(refused)).toMatchObject({ error: 'invalid_scope', state: s.params.state })
      expect((await countRows(t)).codes).toBe(codesBefore)
      const narrower = await browser.get(authorizeUrl({ ...s.params, scope: 'links:read' }))
      expect(locationParams(narrower).code).toBeTruthy()
    } finally {
      await t.database.db
        .updateTable('clients')
        .set({ scopes: s.client.scopes })
        .where('id', '=', s.client.id)
        .execute()
    }
  })

  it.each([
    ['client_id', (id: string) => ({ client_id: `${id}\u0000` })],
    ['redirect_uri', () => ({ redirect_uri: `${REDIRECT_URI}\u0000` })],
  ])(
    'a %s with a NUL byte from a signed-in, consented browser → 400 page, never a query',
    async (_name, bad) => {
      const browser = await approve()
      const res = await browser.get(authorizeUrl({ ...s.params, ...bad(s.client.id) }))
      expect(res.statusCode).toBe(400)
      expect(res.headers.location).toBeUndefined()
      expect(res.headers['content-type']).toMatch(/^text\/html/)
    },
  )

  it('prompt=none with a covering grant → code at once', async () => {
    const browser = await approve()
    const res = await browser.get(authorizeUrl({ ...s.params, prompt: 'none' }))
    expect(res.statusCode).toBe(302)
    expect(locationParams(res).code).toBeTruthy()
  })

  it('prompt=none signed in without a grant → consent_required, no page', async () => {
    const { browser } = await consentPage()
    const res = await browser.get(authorizeUrl({ ...s.params, prompt: 'none' }))
    expect(res.statusCode).toBe(302)
    expect(locationParams(res)).toEqual({
      error: 'consent_required',
      error_description: expect.any(String),
      state: 'xyz-state',
      iss: 'http://localhost:3000',
    })
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('prompt=login shows sign-in despite a session, then continues the same request', async () => {
    const browser = await approve()
    const res = await browser.get(authorizeUrl({ ...s.params, prompt: 'login' }))
    expect(res.statusCode).toBe(303)
    const requestId = requestIdOf(res.headers.location)
    // The old session alone does not satisfy prompt=login.
    const skipped = await browser.get(`/oauth/authorize/continue?request=${requestId}`)
    expect(skipped.headers.location).toBe(`/login?request=${requestId}`)
    const signedIn = await browser.signIn(s.email, PASSWORD, requestId)
    const done = await browser.get(signedIn.headers.location as string)
    expect(done.statusCode).toBe(302)
    expect(locationParams(done).code).toBeTruthy()
    expect(await countRows(t)).toEqual({ grants: 1, codes: 2 })
  })

  it('a continuation cannot be used twice', async () => {
    const browser = await approve()
    const res = await browser.get(authorizeUrl({ ...s.params, prompt: 'login' }))
    const requestId = requestIdOf(res.headers.location)
    const signedIn = await browser.signIn(s.email, PASSWORD, requestId)
    expect((await browser.get(signedIn.headers.location as string)).statusCode).toBe(302)
    const again = await browser.get(signedIn.headers.location as string)
    expect(again.statusCode).toBe(400)
    expect(again.headers.location).toBeUndefined()
    expect(await countRows(t)).toEqual({ grants: 1, codes: 2 })
  })
})

describe('switch account', () => {
  it('signs out and comes back to the same request as someone else', async () => {
    const { browser, requestId, next } = await consentPage()
    const logoutCsrf = /action="\/logout"[\s\S]*?name="csrf_token" value="([^"]+)"/.exec(next.body)![1]!
    const out = await browser.post('/logout', { request: requestId, csrf_token: logoutCsrf })
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe(`/login?request=${requestId}`)
    const signedIn = await browser.signIn(other.email, PASSWORD, requestId)
    const page = await browser.get(signedIn.headers.location as string)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`Signed in as <strong>${other.email}</strong>`)
    const res = await browser.post('/oauth/authorize', {
      request: requestId,
      csrf_token: hiddenField(page.body, 'csrf_token'),
      decision: 'allow',
    })
    expect(res.statusCode).toBe(303)
    const grant = await t.database.db.selectFrom('grants').selectAll().executeTakeFirstOrThrow()
    expect(grant.user_id).toBe(other.user.id)
  })
})
