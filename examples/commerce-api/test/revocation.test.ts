import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  CHALLENGE,
  hiddenField,
  PASSWORD,
  REDIRECT_URI,
  seed,
  VERIFIER,
} from '../../../test/helpers/browser.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { requestsServed } from '../../../test/helpers/resource.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API } from '../../../test/helpers/resource-apis.js'
import { refusedSince, startTwoApis, type TwoApis } from './two-apis.js'

/**
 * Two APIs, two audiences, one consent: a user allows an application the links API's and the
 * commerce API's scopes in the real browser flow; the application gets a token per API; the user
 * revokes the application on /account/apps, and both APIs refuse its calls within a second, told
 * by the revocation feed (no introspection in between).
 */
const LINKS = LINKS_EXAMPLE_API
const COMMERCE = COMMERCE_EXAMPLE_API

let w: TwoApis

beforeAll(async () => {
  w = await startTwoApis()
})
afterAll(async () => w?.close())

it('revoking the app on /account/apps stops its tokens at both APIs within a second', async () => {
  const { t, issuer, links, commerce, call, tokenRequest } = w

  // The user consents once to both APIs' scopes, naming both APIs (RFC 8707: resource twice).
  const s = await seed(t)
  const query = new URLSearchParams({
    ...s.params,
    scope: 'links:read links:write ecommerce:write products:sync',
    code_challenge: CHALLENGE,
  })
  query.append('resource', LINKS.resource)
  query.append('resource', COMMERCE.resource)
  const browser = new HttpBrowser(issuer)
  let consentPage = ''
  const callback = await browser.signInAndAllow(`/oauth/authorize?${query}`, s.email, PASSWORD, (html) => {
    consentPage = html
  })
  expect(consentPage).toContain('Links API')
  expect(consentPage).toContain('Commerce API')

  // A token per API: the code for the links API, the refresh token for the commerce API.
  const first = await tokenRequest({
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    code_verifier: VERIFIER,
    client_id: s.client.id,
    redirect_uri: REDIRECT_URI,
    resource: LINKS.resource,
  })
  expect(first.status).toBe(200)
  const linksToken = first.body.access_token!
  const second = await tokenRequest({
    grant_type: 'refresh_token',
    refresh_token: first.body.refresh_token!,
    client_id: s.client.id,
    resource: COMMERCE.resource,
  })
  expect(second.status).toBe(200)
  expect(second.body.scope).toBe('ecommerce:write products:sync')
  const commerceToken = second.body.access_token!

  // Each token works on its API, and only there.
  expect(
    (await call(links.base, 'POST', '/api/links', linksToken, { target_url: 'https://a.example/' })).status,
  ).toBe(201)
  const sync = await call(commerce.base, 'POST', '/api/products/batch', commerceToken, {
    products: [
      {
        product_id: 'p',
        title: 'P',
        url: 'https://shop.example/p',
        price: '1.00',
        currency: 'EUR',
        availability: 'in_stock',
      },
    ],
  })
  expect(sync.status).toBe(200)
  expect((await call(commerce.base, 'GET', '/api/links', commerceToken)).status).toBe(200)
  expect((await call(commerce.base, 'GET', '/api/products', linksToken)).status).toBe(401)
  expect((await call(links.base, 'GET', '/api/links', commerceToken)).status).toBe(401)

  const introspectionsBefore = await requestsServed(t, '/api/oauth/introspect')
  const calls = () => [links, commerce].map((api) => api.verifier.stats().introspectionCalls)
  const callsBefore = calls()

  // The user revokes the app on the connected-apps page.
  const page = await browser.request('/account/apps')
  const revoked = await browser.request(`/account/apps/${s.client.id}/revoke`, {
    method: 'POST',
    form: { csrf_token: hiddenField(page.body, 'csrf_token') },
  })
  expect(revoked.res.status).toBe(303)
  const revokedAt = performance.now()

  // Both APIs, call after call, until each refuses: within one second.
  const [linksMs, commerceMs] = await Promise.all([
    refusedSince(() => call(links.base, 'GET', '/api/links', linksToken), revokedAt),
    refusedSince(() => call(commerce.base, 'GET', '/api/products', commerceToken), revokedAt),
  ])
  expect(linksMs).toBeLessThan(1000)
  expect(commerceMs).toBeLessThan(1000)
  // Told by the feed: no introspection in between, counted on both sides.
  expect((await requestsServed(t, '/api/oauth/introspect')) - introspectionsBefore).toBe(0)
  expect(calls()).toEqual(callsBefore)
  // It stays refused, for every route of both APIs.
  expect(
    (await call(commerce.base, 'POST', '/api/links', commerceToken, { target_url: 'https://a.example/' }))
      .status,
  ).toBe(401)
  expect((await call(commerce.base, 'GET', '/api/products', commerceToken)).status).toBe(401)
  expect(
    (await call(links.base, 'POST', '/api/links', linksToken, { target_url: 'https://a.example/' })).status,
  ).toBe(401)
  // And the refresh token is gone with the grant.
  const again = await tokenRequest({
    grant_type: 'refresh_token',
    refresh_token: second.body.refresh_token!,
    client_id: s.client.id,
    resource: COMMERCE.resource,
  })
  expect(again.status).toBe(400)
})
