import * as client from 'openid-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { linkauthOpenIdClient } from '../../docs/examples/openid-client.js'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'

/**
 * openid-client, beside oauth4webapi (its author's lower-level library), over real HTTP with the
 * settings docs/integrating.md gives (docs/examples/openid-client.ts): discovery with algorithm
 * 'oauth2', PKCE, the state and RFC 9207 iss checks, code exchange, refresh, revocation.
 */

let t: TestApp
let issuer: string
beforeAll(async () => {
  ;({ t, issuer } = await listenTestApp())
})
afterAll(async () => t.close())

it('openid-client completes the flow, refreshes and revokes with algorithm: oauth2', async () => {
  const s = await seed(t)
  const app = await linkauthOpenIdClient(issuer, s.client.id, REDIRECT_URI)
  const { url, pending } = await app.startAuthorization('links:read links:write')
  expect(url.origin).toBe(issuer)

  const callback = await new HttpBrowser(issuer).signInAndAllow(url.pathname + url.search, s.email, PASSWORD)
  const tokens = await app.finishAuthorization(callback, pending)
  expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 600, scope: 'links:read links:write' })
  expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)

  const refreshed = await app.refresh(tokens.refresh_token!)
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)

  await app.revoke(refreshed.refresh_token!)
  const afterRevoke = await app.refresh(refreshed.refresh_token!).catch((e: unknown) => e)
  expect(afterRevoke).toBeInstanceOf(client.ResponseBodyError)
  expect((afterRevoke as client.ResponseBodyError).error).toBe('invalid_grant')
})

it('the default discovery (OpenID Connect) finds no OpenID configuration: linkauth is no OpenID Provider', async () => {
  const s = await seed(t)
  const refused = await client
    .discovery(new URL(issuer), s.client.id, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
    })
    .catch((e: unknown) => e)
  expect(refused).toBeInstanceOf(client.ClientError)
  const response = (refused as client.ClientError).cause as Response
  expect(response.url).toBe(`${issuer}/.well-known/openid-configuration`)
  expect(response.status).toBe(404)
})
