import type { AddressInfo } from 'node:net'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { field, HttpBrowser } from '../helpers/http-browser.js'

let t: TestApp
let base: string
beforeAll(async () => {
  t = await buildTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
})
afterAll(async () => t.close())

it('runs the whole flow over real HTTP and the client library accepts the answer', async () => {
  const s = await seed(t)
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL('/oauth/authorize', base)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: s.client.id,
    redirect_uri: REDIRECT_URI,
    scope: 'links:read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()

  const browser = new HttpBrowser(base)
  const signInPage = await browser.follow(await browser.request(url.pathname + url.search))
  expect(signInPage.res.status).toBe(200)
  expect(signInPage.body).toContain('<label for="email">Email</label>')

  const consent = await browser.follow(
    await browser.request('/login', {
      method: 'POST',
      form: {
        email: s.email,
        password: PASSWORD,
        csrf_token: field(signInPage.body, 'csrf_token'),
        request: field(signInPage.body, 'request'),
      },
    }),
  )
  expect(consent.res.status).toBe(200)
  expect(consent.res.headers.get('cache-control')).toBe('no-store')
  expect(consent.body).toContain('>Allow</button>')

  const decision = await browser.request('/oauth/authorize', {
    method: 'POST',
    form: {
      request: field(consent.body, 'request'),
      csrf_token: field(consent.body, 'csrf_token'),
      decision: 'allow',
    },
  })
  expect(decision.res.status).toBe(303)
  const callback = new URL(decision.res.headers.get('location')!)
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI)

  // oauth4webapi checks state and the RFC 9207 iss against the issuer.
  const as: oauth.AuthorizationServer = {
    issuer: t.config.issuer,
    authorization_response_iss_parameter_supported: true,
  }
  const params = oauth.validateAuthResponse(as, { client_id: s.client.id }, callback, state)
  const code = params.get('code')!
  const row = await t.database.db
    .selectFrom('authorization_codes')
    .selectAll()
    .where('code_hash', '=', sha256(code))
    .executeTakeFirstOrThrow()
  expect(row).toMatchObject({ client_id: s.client.id, user_id: s.user.id, scopes: ['links:read'] })

  // Remembered consent: the next request comes straight back with a code.
  const again = await browser.follow(await browser.request(url.pathname + url.search))
  expect(again.location).toMatch(/^https:\/\/app\.example\/callback\?code=/)
  oauth.validateAuthResponse(as, { client_id: s.client.id }, new URL(again.location!), state)
})
