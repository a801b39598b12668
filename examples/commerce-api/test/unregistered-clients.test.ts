import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENEROUS_LIMITS, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/helpers/app.js'
import { CHALLENGE, PASSWORD, VERIFIER } from '../../../test/helpers/browser.js'
import {
  clientDocument,
  type DocumentServer,
  startDocumentServer,
} from '../../../test/helpers/document-server.js'
import { createStream, drain, revokes } from '../../../test/helpers/events.js'
import { jwtClaims } from '../../../test/helpers/fixtures.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { COMMERCE_EXAMPLE_API, LINKS_EXAMPLE_API } from '../../../test/helpers/resource-apis.js'
import { refusedSince, startTwoApis, type RunningApi, type TwoApis } from './two-apis.js'

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

let w: TwoApis
let t: TestApp
let issuer: string
let documents: DocumentServer
let links: RunningApi
let commerce: RunningApi
let call: TwoApis['call']
let tokenRequest: TwoApis['tokenRequest']
let observer: { id: string; secret: string }
let stream: string

beforeAll(async () => {
  documents = await startDocumentServer()
  w = await startTwoApis({ ...GENEROUS_LIMITS, CLIENT_METADATA_TEST_CA: documents.caPath })
  ;({ t, issuer, links, commerce, call, tokenRequest } = w)
  // A third resource server follows the feed too, to read what it announces.
  const created = await t.services.resourceServers.createResourceServer({ name: 'Observer' })
  observer = { id: created.id, secret: created.secret }
  stream = await createStream(t, observer)
})
afterAll(async () => {
  await w?.close()
  await documents?.close()
})

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
        refusedSince(() => call(links.base, 'GET', '/api/links', linksToken)),
        refusedSince(() => call(commerce.base, 'GET', '/api/products', commerceToken)),
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
      refusedSince(() => call(links.base, 'GET', '/api/links', first.body.access_token!)),
      refusedSince(() => call(commerce.base, 'GET', '/api/products', second.body.access_token!)),
    ])
  })
})
