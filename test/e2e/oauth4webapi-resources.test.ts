import { createResourceVerifier, InvalidTokenError } from '@linkauth/resource'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

/**
 * RFC 8707 end to end with a strict third-party client (oauth4webapi) and two resource servers: the
 * client names both APIs at authorization, gets a token for each in turn from one refresh token, and
 * each API, through its own `@linkauth/resource` verifier and through introspection, accepts its token
 * and refuses the other's.
 */

let t: TestApp
let issuer: URL
let credentials: { id: string; secret: string }[]
beforeAll(async () => {
  ;({ t } = await listenTestApp())
  issuer = new URL(t.config.issuer)
  credentials = [await registerApi(t, LINKS_API), await registerApi(t, SHOP_API)]
})
afterAll(async () => t.close())

it('a standard client gets one token per API; each API refuses the other’s', async () => {
  const s = await seed(t)
  const client: oauth.Client = { client_id: s.client.id }
  const auth = oauth.None()
  const as = await discover(issuer)

  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const authorizeUrl = new URL(as.authorization_endpoint!)
  authorizeUrl.search = new URLSearchParams([
    ['client_id', client.client_id],
    ['redirect_uri', REDIRECT_URI],
    ['response_type', 'code'],
    ['scope', 'links:read ecommerce:write'],
    ['state', state],
    ['code_challenge', await oauth.calculatePKCECodeChallenge(verifier)],
    ['code_challenge_method', 'S256'],
    ['resource', LINKS_API.resource],
    ['resource', SHOP_API.resource],
  ]).toString()

  const callback = await new HttpBrowser(issuer.origin).signInAndAllow(
    authorizeUrl.pathname + authorizeUrl.search,
    s.email,
    PASSWORD,
    (consentPage) => {
      expect(consentPage).toContain(LINKS_API.name)
      expect(consentPage).toContain(SHOP_API.name)
    },
  )
  const params = oauth.validateAuthResponse(as, client, callback, state)

  const links = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT_URI, verifier, {
      ...insecure,
      additionalParameters: { resource: LINKS_API.resource },
    }),
  )
  expect(links.scope).toBe('links:read')
  const linksClaims = await oauth.validateJwtAccessToken(
    as,
    new Request(LINKS_API.resource, { headers: { authorization: `Bearer ${links.access_token}` } }),
    LINKS_API.resource,
    insecure,
  )
  expect(linksClaims.aud).toBe(LINKS_API.resource)

  const shop = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, links.refresh_token!, {
      ...insecure,
      additionalParameters: { resource: SHOP_API.resource },
    }),
  )
  expect(shop.scope).toBe('ecommerce:write')

  // Naming no resource for an authorization of two: the client is told to name one.
  const silent = await oauth
    .processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, shop.refresh_token!, insecure),
    )
    .catch((e: unknown) => e)
  expect(silent).toBeInstanceOf(oauth.ResponseBodyError)
  expect((silent as oauth.ResponseBodyError).error).toBe('invalid_target')

  // Each API asking introspection (RFC 7662 §4): its own token is active, the other API's is not.
  const introspect = async (api: { id: string; secret: string }, token: string) => {
    const answer = await fetch(new URL('/api/oauth/introspect', issuer), {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${api.id}:${api.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }),
    })
    expect(answer.status).toBe(200)
    return ((await answer.json()) as { active: boolean }).active
  }
  const [linksCredentials, shopCredentials] = credentials as [
    { id: string; secret: string },
    { id: string; secret: string },
  ]
  expect(await introspect(linksCredentials, links.access_token)).toBe(true)
  expect(await introspect(shopCredentials, shop.access_token)).toBe(true)
  expect(await introspect(shopCredentials, links.access_token)).toBe(false)
  expect(await introspect(linksCredentials, shop.access_token)).toBe(false)

  // Each API with the toolkit, configured with its own identifier as audience.
  const linksApi = await createResourceVerifier({
    issuer: as.issuer,
    resource: LINKS_API.resource,
    revocationFeed: false,
  })
  const shopApi = await createResourceVerifier({
    issuer: as.issuer,
    resource: SHOP_API.resource,
    revocationFeed: false,
  })
  try {
    await expect(linksApi.verify(links.access_token, ['links:read'])).resolves.toMatchObject({
      sub: s.user.id,
    })
    await expect(shopApi.verify(shop.access_token, ['ecommerce:write'])).resolves.toMatchObject({
      sub: s.user.id,
    })
    for (const [api, foreign] of [
      [shopApi, links.access_token],
      [linksApi, shop.access_token],
    ] as const) {
      const refused = await api.verify(foreign).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(InvalidTokenError)
      expect(refused).toMatchObject({ error: 'invalid_token', status: 401 })
    }
  } finally {
    await linksApi.close()
    await shopApi.close()
  }
})
