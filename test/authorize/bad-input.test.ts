import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, countRows, hiddenField, PASSWORD, seed } from '../helpers/browser.js'

let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp()
  s = await seed(t)
})
afterAll(async () => t.close())

describe('bad input is never a 500', () => {
  it.each([
    ['broken percent-encoding', `/oauth/authorize?client_id=%ZZ&redirect_uri=%`],
    ['a bracketed parameter name', `/oauth/authorize?client_id[]=x&redirect_uri[a]=y`],
    [
      'a very long client_id',
      `/oauth/authorize?client_id=${'a'.repeat(5000)}&redirect_uri=https://a.example/cb`,
    ],
    ['a continuation with no request', '/oauth/authorize/continue'],
    ['a continuation with an unknown request', '/oauth/authorize/continue?request=AAAAAAAAAAAAAAAAAAAAAA'],
  ])('GET with %s → 400 page', async (_name, url) => {
    const res = await t.app.inject({ url })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toMatch(/^text\/html/)
  })

  it.each([
    ['no body', undefined, undefined],
    ['a JSON body', 'application/json', '{"decision":"allow","request":["x"]}'],
    ['an empty form', 'application/x-www-form-urlencoded', ''],
    [
      'repeated fields',
      'application/x-www-form-urlencoded',
      'decision=allow&decision=deny&csrf_token=a&csrf_token=b',
    ],
  ])('POST /oauth/authorize with %s → 403, nothing granted', async (_name, type, payload) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      ...(type ? { headers: { 'content-type': type } } : {}),
      ...(payload !== undefined ? { payload } : {}),
    })
    expect(res.statusCode).toBe(403)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('POST /login with a JSON body and no CSRF cookie → 403', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/json' },
      payload: { email: s.email, password: PASSWORD },
    })
    expect(res.statusCode).toBe(403)
  })

  it('POST /logout without a session → 303 to /login', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/logout' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/login')
  })

  it('a second sign-in replaces the first session', async () => {
    const browser = new Browser(t.app)
    await browser.signIn(s.email, PASSWORD)
    await browser.signIn(s.email, PASSWORD)
    const sessions = await t.database.db
      .selectFrom('sign_in_sessions')
      .select('id')
      .where('user_id', '=', s.user.id)
      .execute()
    expect(sessions).toHaveLength(1)
  })

  // Found by test/properties/public-endpoints.property.test.ts: each of these answered 500.
  it('a client_id with a NUL byte → 400 page (it never reaches a query)', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, client_id: `${s.client.id}\u0000` }) })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toMatch(/^text\/html/)
  })

  it('a state with a control character → invalid_request at the redirect_uri, state not echoed', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, state: 'a\u0000b' }) })
    expect(res.statusCode).toBe(302)
    const location = new URL(String(res.headers.location))
    expect(`${location.origin}${location.pathname}`).toBe(s.params.redirect_uri)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.has('state')).toBe(false)
  })

  it('an email with a NUL byte at sign-in → the wrong-credentials page, not a 500', async () => {
    const browser = new Browser(t.app)
    const page = await browser.get('/login')
    const res = await browser.post('/login', {
      email: `${s.email}\u0000`,
      password: PASSWORD,
      csrf_token: hiddenField(page.body, 'csrf_token'),
    })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
  })

  it.each([
    ['an over-long client_id in the path', 'DELETE', `/api/account/apps/${'x'.repeat(300)}`, 414, 'problem'],
    ['broken percent-encoding in the path', 'DELETE', '/api/account/apps/%E0%A4%A', 400, 'problem'],
    ['broken percent-encoding in a page path', 'POST', '/account/apps/%E0%A4%A/revoke', 400, 'html'],
    ['broken percent-encoding on an OAuth path', 'POST', '/api/oauth/%', 400, 'oauth'],
  ] as const)('%s → our error, with the security headers', async (_name, method, url, status, style) => {
    const res = await t.app.inject({ method, url })
    expect(res.statusCode).toBe(status)
    expect(res.headers['content-type']).toMatch(
      { problem: /^application\/problem\+json/, html: /^text\/html/, oauth: /^application\/json/ }[style],
    )
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.body).not.toContain('FST_ERR')
  })

  it('HEAD on the authorization endpoint grants nothing', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: authorizeUrl(s.params) })
    expect(res.statusCode).toBeLessThan(500)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })
})
