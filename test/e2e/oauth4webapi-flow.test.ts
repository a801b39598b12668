import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

/**
 * The whole flow over real HTTP with a strict third-party client library (oauth4webapi): discovery,
 * PKCE, the browser's sign-in and consent, the RFC 9207 iss check, code exchange, a resource server
 * verifying the access token with nothing but our JWKS, and refresh rotation.
 */

let t: TestApp
let issuer: URL
// Stands still from now unless moved: the test moves it past the refresh retry window.
const clock = createTestClock()
beforeAll(async () => {
  ;({ t } = await listenTestApp({ clock }))
  issuer = new URL(t.config.issuer)
})
afterAll(async () => t.close())

it('a standard client completes the flow and refreshes; a resource server verifies with the JWKS alone', async () => {
  const s = await seed(t)
  const client: oauth.Client = { client_id: s.client.id }
  const auth = oauth.None()

  const as = await discover(issuer)
  expect(as.code_challenge_methods_supported).toEqual(['S256'])

  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const authorizeUrl = new URL(as.authorization_endpoint!)
  authorizeUrl.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'links:read links:write',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()

  // The user's browser: sign in, then Allow.
  const callback = await new HttpBrowser(issuer.origin).signInAndAllow(
    authorizeUrl.pathname + authorizeUrl.search,
    s.email,
    PASSWORD,
  )

  // The client: check state and iss, then exchange the code with the verifier.
  const params = oauth.validateAuthResponse(as, client, callback, state)
  const tokenResponse = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    auth,
    params,
    REDIRECT_URI,
    verifier,
    insecure,
  )
  expect(tokenResponse.headers.get('cache-control')).toBe('no-store')
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse)
  expect(tokens.token_type).toBe('bearer') // oauth4webapi lower-cases it
  expect(tokens.scope).toBe('links:read links:write')
  expect(tokens.expires_in).toBe(600)
  expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)

  // A resource server: nothing but the JWKS, the issuer and its audience.
  const jwks = createRemoteJWKSet(new URL(as.jwks_uri!))
  const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
    issuer: as.issuer,
    audience: t.config.accessTokenAudience,
    typ: 'at+jwt',
  })
  expect(protectedHeader.alg).toBe('ES256')
  expect(payload).toMatchObject({ sub: s.user.id, client_id: s.client.id, scope: 'links:read links:write' })
  expect(payload.exp! - payload.iat!).toBe(600)
  expect(typeof payload.jti).toBe('string')
  expect(typeof payload.grant_id).toBe('string')
  expect(typeof payload.family_id).toBe('string')
  // The library's own RFC 9068 validation agrees.
  const validated = await oauth.validateJwtAccessToken(
    as,
    new Request('http://resource.example/links', {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    }),
    t.config.accessTokenAudience,
    insecure,
  )
  expect(validated.sub).toBe(s.user.id)

  // Refresh: a new pair; the old refresh token is then spent.
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure),
  )
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
  expect(decodeProtectedHeader(refreshed.access_token).kid).toBe(protectedHeader.kid)
  await jwtVerify(refreshed.access_token, jwks, { issuer: as.issuer, audience: t.config.accessTokenAudience })

  // A lost response retried at once (REFRESH_REUSE_WINDOW): a fresh access token with the same
  // refresh token (one lineage), which works.
  const retried = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure),
  )
  expect(retried.refresh_token).toBe(refreshed.refresh_token)
  expect(retried.access_token).not.toBe(refreshed.access_token)
  await jwtVerify(retried.access_token, jwks, { issuer: as.issuer, audience: t.config.accessTokenAudience })
  await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, retried.refresh_token!, insecure),
  )

  // After the window the spent token is theft: refused (and its family revoked).
  clock.advance(t.config.refreshReuseWindow)
  const reuse = await oauth
    .processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure),
    )
    .catch((e: unknown) => e)
  expect(reuse).toBeInstanceOf(oauth.ResponseBodyError)
  expect((reuse as oauth.ResponseBodyError).error).toBe('invalid_grant')
})
