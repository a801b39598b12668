import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { CHALLENGE, PASSWORD, REDIRECT_URI, seed, VERIFIER } from '../helpers/browser.js'
import { hiddenField as field } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { basicAuth, createResourceServer, type ResourceServerCredentials } from '../helpers/tokens.js'

let t: TestApp
let base: string
let rs: ResourceServerCredentials
beforeAll(async () => {
  t = await buildTestApp()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  rs = await createResourceServer(t)
})
afterAll(async () => t.close())

async function post(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, base), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const introspect = (token: string) =>
  post('/api/oauth/introspect', { token }, { authorization: basicAuth(rs.id, rs.secret) })

it('a user revokes a third-party app and on the very next request its tokens are dead', async () => {
  const s = await seed(t)
  const authorize = `/oauth/authorize?${new URLSearchParams({ ...s.params, code_challenge: CHALLENGE }).toString()}`
  const browser = new HttpBrowser(base)

  // The app sends the user to authorize; they sign in and allow.
  const callback = await browser.signInAndAllow(authorize, s.email, PASSWORD, (consentPage) =>
    expect(consentPage).toContain('>Allow</button>'),
  )
  const code = callback.searchParams.get('code')!

  // The app exchanges the code; the API sees live tokens.
  const tokens = await post('/api/oauth/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: VERIFIER,
    client_id: s.client.id,
    redirect_uri: REDIRECT_URI,
  })
  expect(tokens.status).toBe(200)
  const accessToken = String(tokens.body.access_token)
  const refreshToken = String(tokens.body.refresh_token)
  expect((await introspect(accessToken)).body.active).toBe(true)
  // Refresh tokens are the authorization server's alone: never active for a resource server.
  expect((await introspect(refreshToken)).body).toEqual({ active: false })

  // The user opens their connected apps and revokes it.
  const apps = await browser.request('/account/apps')
  expect(apps.res.status).toBe(200)
  expect(apps.body).toContain('aria-label="Revoke Link App"')
  const revoked = await browser.request(`/account/apps/${s.client.id}/revoke`, {
    method: 'POST',
    form: { csrf_token: field(apps.body, 'csrf_token') },
  })
  expect(revoked.res.status).toBe(303)
  const after = await browser.follow(revoked)
  expect(after.body).toContain('You revoked access for <strong>Link App</strong>')
  expect(after.body).toContain('No application is connected to your account.')

  // The very next requests: both tokens inactive, refresh refused, and consent is asked again.
  expect((await introspect(accessToken)).body).toEqual({ active: false })
  expect((await introspect(refreshToken)).body).toEqual({ active: false })
  const refresh = await post('/api/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: s.client.id,
  })
  expect(refresh.status).toBe(400)
  expect(refresh.body.error).toBe('invalid_grant')
  const again = await browser.follow(await browser.request(authorize))
  expect(again.location).toBeUndefined()
  expect(again.body).toContain('>Allow</button>')
})
