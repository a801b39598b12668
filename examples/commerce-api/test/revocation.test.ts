import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildCommerceApp } from '../src/app.js'
import { buildLinksApp } from '../../links-api/src/app.js'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import {
  CHALLENGE,
  hiddenField,
  PASSWORD,
  REDIRECT_URI,
  seed,
  VERIFIER,
} from '../../../test/helpers/browser.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { freePort } from '../../../test/helpers/net.js'
import { captureLogger, requestsServed } from '../../../test/helpers/resource.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API, registerApi } from '../../../test/helpers/resource-apis.js'
import { createLinksTestDatabase, type LinksTestDatabase } from '../../links-api/test/links-database.js'
import { type CommerceTestDatabase, createCommerceTestDatabase } from './commerce-database.js'

/**
 * Two APIs, two audiences, one consent: a user allows an application the links API's and the
 * commerce API's scopes in the real browser flow; the application gets a token per API; the user
 * revokes the application on /account/apps, and both APIs refuse its calls within a second, told
 * by the revocation feed (no introspection in between).
 */
const LINKS = LINKS_EXAMPLE_API
const COMMERCE = COMMERCE_EXAMPLE_API

let t: TestApp
let issuer: string
let linksDb: LinksTestDatabase
let commerceDb: CommerceTestDatabase
const apps: FastifyInstance[] = []
const verifiers: ResourceVerifier[] = []

async function startApi(
  api: { resource: string },
  credentials: { id: string; secret: string },
  build: (base: string, verifier: ResourceVerifier) => Promise<FastifyInstance>,
) {
  const verifier = await createResourceVerifier({
    issuer,
    resource: api.resource,
    credentials,
    logger: captureLogger().logger,
  })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await build(base, verifier)
  await app.listen({ port, host: '127.0.0.1' })
  apps.push(app)
  verifiers.push(verifier)
  return { base, verifier }
}

beforeAll(async () => {
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  t = await buildTestApp({ env: { ISSUER: issuer } })
  await t.app.listen({ port, host: '127.0.0.1' })
  linksDb = await createLinksTestDatabase(t.database)
  commerceDb = await createCommerceTestDatabase(t.database)
})
afterAll(async () => {
  for (const app of apps) await app.close()
  for (const verifier of verifiers) await verifier.close()
  await linksDb?.close()
  await commerceDb?.close()
  await t?.close()
})

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }
}

const tokenRequest = (params: Record<string, string>) =>
  fetch(`${issuer}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }))

it('revoking the app on /account/apps stops its tokens at both APIs within a second', async () => {
  const links = await startApi(LINKS, await registerApi(t, LINKS), (base, verifier) =>
    buildLinksApp({ config: { publicUrl: base }, db: linksDb.db, verifier }),
  )
  const commerce = await startApi(COMMERCE, await registerApi(t, COMMERCE), (base, verifier) =>
    buildCommerceApp({ config: { publicUrl: base }, db: commerceDb.db, verifier }),
  )

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
  const calls = () => verifiers.map((v) => v.stats().introspectionCalls)
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
  const refusedAfter = async (probe: () => Promise<{ status: number; body: Record<string, unknown> }>) => {
    const answers: number[] = []
    while (performance.now() - revokedAt < 2000) {
      const res = await probe()
      answers.push(res.status)
      if (res.status === 401) {
        expect(res.body.error).toBe('invalid_token')
        return performance.now() - revokedAt
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error(`never refused: ${answers.join(', ')}`)
  }
  const [linksMs, commerceMs] = await Promise.all([
    refusedAfter(() => call(links.base, 'GET', '/api/links', linksToken)),
    refusedAfter(() => call(commerce.base, 'GET', '/api/products', commerceToken)),
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
