import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, countRows, PASSWORD, seed } from '../helpers/browser.js'

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

  it('HEAD on the authorization endpoint grants nothing', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: authorizeUrl(s.params) })
    expect(res.statusCode).toBeLessThan(500)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })
})
