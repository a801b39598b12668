import { randomBytes } from 'node:crypto'
import { AuthorizationCode } from 'simple-oauth2'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { s256Challenge } from '../../src/lib/pkce.js'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'

/**
 * A classic client library with its defaults (simple-oauth2: the client id in HTTP Basic with an
 * empty password, a form body, a JSON answer required even from revocation), over real HTTP: code
 * exchange with PKCE, refresh, revocation. The settings are those docs/integrating.md gives.
 */

let t: TestApp
let issuer: string
beforeAll(async () => {
  ;({ t, issuer } = await listenTestApp())
})
afterAll(async () => t.close())

function library(clientId: string, secret?: string) {
  return new AuthorizationCode({
    // A public client: the secret is the empty string (left out, the library sends "undefined").
    client: { id: clientId, secret: secret as string },
    auth: {
      tokenHost: issuer,
      tokenPath: '/api/oauth/token',
      revokePath: '/api/oauth/revoke',
      authorizePath: '/oauth/authorize',
    },
  })
}

async function authorize(oauth: AuthorizationCode, email: string, verifier: string) {
  const state = randomBytes(8).toString('hex')
  const url = new URL(
    oauth.authorizeURL({
      redirect_uri: REDIRECT_URI,
      scope: ['links:read', 'links:write'],
      state,
      code_challenge: s256Challenge(verifier),
      code_challenge_method: 'S256',
    } as Parameters<AuthorizationCode['authorizeURL']>[0]),
  )
  const callback = await new HttpBrowser(issuer).signInAndAllow(url.pathname + url.search, email, PASSWORD)
  expect(callback.searchParams.get('state')).toBe(state)
  expect(callback.searchParams.get('iss')).toBe(issuer)
  return callback.searchParams.get('code')!
}

it('simple-oauth2 with its default Basic auth exchanges the code, refreshes and revokes', async () => {
  const s = await seed(t)
  const oauth = library(s.client.id, '')
  const verifier = randomBytes(32).toString('base64url')
  const code = await authorize(oauth, s.email, verifier)

  const token = await oauth.getToken({
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  } as Parameters<AuthorizationCode['getToken']>[0])
  expect(token.token).toMatchObject({
    token_type: 'Bearer',
    expires_in: 600,
    scope: 'links:read links:write',
  })

  const refreshed = await token.refresh()
  expect(refreshed.token.refresh_token).not.toBe(token.token.refresh_token)
  expect(refreshed.token.access_token).toEqual(expect.any(String))

  // revoke() insists on a JSON answer; both kinds of token, each with its hint.
  await expect(refreshed.revoke('access_token')).resolves.toEqual({})
  await expect(refreshed.revoke('refresh_token')).resolves.toEqual({})
  await expect(refreshed.refresh()).rejects.toMatchObject({
    output: { statusCode: 400 },
    data: { payload: { error: 'invalid_grant' } },
  })
})

it('without secret: "" the library sends a password, which is refused as invalid_client', async () => {
  const s = await seed(t)
  const verifier = randomBytes(32).toString('base64url')
  const code = await authorize(library(s.client.id, ''), s.email, verifier)
  const refused = await library(s.client.id)
    .getToken({ code, redirect_uri: REDIRECT_URI, code_verifier: verifier } as Parameters<
      AuthorizationCode['getToken']
    >[0])
    .catch((e: unknown) => e)
  expect(refused).toMatchObject({
    output: { statusCode: 401 },
    data: { payload: { error: 'invalid_client' } },
  })
})
