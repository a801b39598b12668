import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCommerceApp } from '../src/app.js'
import { buildLinksApp } from '../../links-api/src/app.js'
import { buildTestApp, GENEROUS_LIMITS, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/helpers/app.js'
import { CHALLENGE, PASSWORD, VERIFIER } from '../../../test/helpers/browser.js'
import {
  clientDocument,
  type DocumentServer,
  startDocumentServer,
} from '../../../test/helpers/document-server.js'
import { createStream, drain, revokes } from '../../../test/helpers/events.js'
import { jwtClaims } from '../../../test/helpers/fixtures.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { freePort } from '../../../test/helpers/net.js'
import { captureLogger } from '../../../test/helpers/resource.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API, registerApi } from '../../../test/helpers/resource-apis.js'
import { createLinksTestDatabase, type LinksTestDatabase } from '../../links-api/test/links-database.js'
import { type CommerceTestDatabase, createCommerceTestDatabase } from './commerce-database.js'

/**
 * Issue 27: applications that arrive without the operator (a Client ID Metadata Document's client_id
 * URL, and a dynamic registration) need nothing new from the resource side. Both example APIs accept
 * their tokens as they are; the user revokes the application on /account/apps; the revocation feed
 * announces it (an event covering the token whose client_id is the URL) and both APIs, told by the
 * feed, refuse its tokens. A blocked client_id URL is announced with the URL itself.
 */
const LINKS = LINKS_EXAMPLE_API
const COMMERCE = COMMERCE_EXAMPLE_API
const REDIRECT = 'https://agent.example/callback'

let t: TestApp
let issuer: string
let documents: DocumentServer
let linksDb: LinksTestDatabase
let commerceDb: CommerceTestDatabase
let links: { base: string }
let commerce: { base: string }
let observer: { id: string; secret: string }
let stream: string
const apps: FastifyInstance[] = []
const verifiers: ResourceVerifier[] = []

async function startApi(
  api: { name: string; resource: string; scopes: string[] },
  build: (base: string, verifier: ResourceVerifier) => Promise<FastifyInstance>,
) {
  const verifier = await createResourceVerifier({
    issuer,
    resource: api.resource,
    credentials: await registerApi(t, api),
    logger: captureLogger().logger,
  })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const app = await build(base, verifier)
  await app.listen({ port, host: '127.0.0.1' })
  apps.push(app)
  verifiers.push(verifier)
  return { base }
}

beforeAll(async () => {
  documents = await startDocumentServer()
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  t = await buildTestApp({
    env: { ...GENEROUS_LIMITS, ISSUER: issuer, CLIENT_METADATA_TEST_CA: documents.caPath },
  })
  await t.app.listen({ port, host: '127.0.0.1' })
  linksDb = await createLinksTestDatabase(t.database)
  commerceDb = await createCommerceTestDatabase(t.database)
  links = await startApi(LINKS, (base, verifier) =>
    buildLinksApp({ config: { publicUrl: base }, db: linksDb.db, verifier }),
  )
  commerce = await startApi(COMMERCE, (base, verifier) =>
    buildCommerceApp({ config: { publicUrl: base }, db: commerceDb.db, verifier }),
  )
  // A third resource server follows the feed too, to read what it announces.
  const created = await t.services.resourceServers.createResourceServer({ name: 'Observer' })
  observer = { id: created.id, secret: created.secret }
  stream = await createStream(t, observer)
})
afterAll(async () => {
  for (const app of apps) await app.close()
  for (const verifier of verifiers) await verifier.close()
  await linksDb?.close()
  await commerceDb?.close()
  await t?.close()
  await documents?.close()
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

let counter = 0
const clientKinds: [string, () => Promise<string>][] = [
  [
    'a metadata-document client (client_id URL)',
    async () => {
      const path = `/apps/${++counter}.json`
      return documents.publish(path, clientDocument(documents.url(path), { redirect_uris: [REDIRECT] }))
    },
  ],
  [
    'a dynamically registered client',
    async () => {
      const res = await fetch(`${issuer}/api/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Agent', redirect_uris: [REDIRECT] }),
      })
      expect(res.status).toBe(201)
      return ((await res.json()) as { client_id: string }).client_id
    },
  ],
]

/** Calls until the API refuses (401 invalid_token), within two seconds of the revocation. */
async function refusedSoon(probe: () => Promise<{ status: number; body: Record<string, unknown> }>) {
  const started = performance.now()
  const answers: number[] = []
  while (performance.now() - started < 2000) {
    const res = await probe()
    answers.push(res.status)
    if (res.status === 401) {
      expect(res.body.error).toBe('invalid_token')
      return
    }
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never refused: ${answers.join(', ')}`)
}

describe('both example APIs and the feed, unchanged, with clients that arrive without the operator', () => {
  it.each(clientKinds)(
    '%s: accepted, revoked on /account/apps, announced, refused',
    async (_, makeClient) => {
      const clientId = await makeClient()
      const email = `unreg-${Math.random().toString(36).slice(2)}@example.com`
      await t.services.users.createUser({ email, password: PASSWORD })
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        scope: 'links:read links:write ecommerce:write products:sync',
        state: 'st',
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      })
      query.append('resource', LINKS.resource)
      query.append('resource', COMMERCE.resource)
      const browser = new HttpBrowser(issuer)
      let consentPage = ''
      const callback = await browser.signInAndAllow(`/oauth/authorize?${query}`, email, PASSWORD, (html) => {
        consentPage = html
      })
      if (clientId.startsWith('https://')) {
        expect(consentPage).toContain('Not registered with this service')
        expect(consentPage).toContain(new URL(clientId).host)
      } else expect(consentPage).toContain('Unverified application.')

      const first = await tokenRequest({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        code_verifier: VERIFIER,
        client_id: clientId,
        redirect_uri: REDIRECT,
        resource: LINKS.resource,
      })
      expect(first.status).toBe(200)
      const linksToken = first.body.access_token!
      const second = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: first.body.refresh_token!,
        client_id: clientId,
        resource: COMMERCE.resource,
      })
      expect(second.status).toBe(200)
      const commerceToken = second.body.access_token!
      expect(jwtClaims(linksToken).client_id).toBe(clientId)
      expect(jwtClaims(commerceToken).client_id).toBe(clientId)

      // Each API accepts its token, as from a registered client.
      expect(
        (await call(links.base, 'POST', '/api/links', linksToken, { target_url: 'https://a.example/' }))
          .status,
      ).toBe(201)
      expect((await call(links.base, 'GET', '/api/links', linksToken)).status).toBe(200)
      expect((await call(commerce.base, 'GET', '/api/products', commerceToken)).status).toBe(200)
      await drain(t, observer, stream)

      // The user revokes the app on the connected-apps page, by the form the page draws.
      const page = await browser.request('/account/apps')
      expect(page.body).toContain(clientId.startsWith('https://') ? 'Agent Smith' : 'Agent')
      const action = new RegExp(`action="(/account/apps/[^"]+/revoke)"`).exec(page.body)?.[1]
      expect(action).toBe(`/account/apps/${encodeURIComponent(clientId)}/revoke`)
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!
      const revoked = await browser.request(action!, { method: 'POST', form: { csrf_token: csrf } })
      expect(revoked.res.status).toBe(303)

      // The feed announces it: an event that covers both tokens, whose client_id is the client's.
      const events = await drain(t, observer, stream)
      expect(events.length).toBeGreaterThan(0)
      expect(revokes(events, linksToken)).toBe(true)
      expect(revokes(events, commerceToken)).toBe(true)
      // Each API, told by the feed, refuses its token.
      await Promise.all([
        refusedSoon(() => call(links.base, 'GET', '/api/links', linksToken)),
        refusedSoon(() => call(commerce.base, 'GET', '/api/products', commerceToken)),
      ])
      const again = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token!,
        client_id: clientId,
      })
      expect(again.status).toBe(400)
      expect(again.body.error).toBe('invalid_grant')
    },
  )

  it('a blocked client_id URL is announced with the URL itself, and both APIs refuse its tokens', async () => {
    const clientId = await clientKinds[0]![1]()
    const email = `unreg-${Math.random().toString(36).slice(2)}@example.com`
    await t.services.users.createUser({ email, password: PASSWORD })
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'links:read products:sync',
      code_challenge: CHALLENGE,
    })
    query.append('resource', LINKS.resource)
    query.append('resource', COMMERCE.resource)
    const callback = await new HttpBrowser(issuer).signInAndAllow(
      `/oauth/authorize?${query}`,
      email,
      PASSWORD,
    )
    const first = await tokenRequest({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      code_verifier: VERIFIER,
      client_id: clientId,
      resource: LINKS.resource,
    })
    const second = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      client_id: clientId,
      resource: COMMERCE.resource,
    })
    expect((await call(links.base, 'GET', '/api/links', first.body.access_token!)).status).toBe(200)
    expect((await call(commerce.base, 'GET', '/api/products', second.body.access_token!)).status).toBe(200)
    await drain(t, observer, stream)

    const blocked = await t.admin.inject({
      method: 'POST',
      url: '/admin/blocked-clients',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { client_id: clientId, reason: 'look-alike' },
    })
    expect(blocked.statusCode).toBe(201)
    const events = await drain(t, observer, stream)
    expect(events.map((e) => [e.type, e.event.client_id])).toEqual([
      ['urn:linkauth:event:client-disabled', clientId],
    ])
    await Promise.all([
      refusedSoon(() => call(links.base, 'GET', '/api/links', first.body.access_token!)),
      refusedSoon(() => call(commerce.base, 'GET', '/api/products', second.body.access_token!)),
    ])
  })
})
