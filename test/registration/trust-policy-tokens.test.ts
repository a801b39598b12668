import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, CHALLENGE, VERIFIER } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'
import { allow, appWithUser, authorizeAndSignIn } from './setup.js'

/**
 * Issue 27, the trust policy beyond authorize: turning CLIENT_METADATA_DOCUMENTS off, denying a host
 * or leaving it off the allow list stops what metadata-document clients already hold (codes and
 * refresh tokens answer invalid_client, access tokens introspect inactive) without revoking it, so
 * turning the door on again lets the same tokens work; blocking a client_id URL revokes for good.
 */

let server: DocumentServer
let t: TestApp
let email: string
let rs: ResourceServerCredentials
const REDIRECT = 'https://agent.example/callback'

beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t, email } = await appWithUser('policy', { env: { CLIENT_METADATA_TEST_CA: server.caPath } }))
  rs = await createResourceServer(t)
})
afterAll(async () => {
  await t?.close()
  await server?.close()
})

let counter = 0
function publish(): string {
  const path = `/policy/${++counter}.json`
  return server.publish(path, clientDocument(server.url(path), { redirect_uris: [REDIRECT] }))
}

const authorizeParams = (clientId: string) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  scope: 'links:read',
  state: 'st',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
})

/** One consent (the first time) or remembered consent: a fresh code for the client. */
async function codeFor(browser: Browser, clientId: string, signIn: boolean): Promise<string> {
  let answer
  if (signIn) {
    const { page } = await authorizeAndSignIn(t, email, authorizeParams(clientId), browser)
    expect(page.statusCode).toBe(200)
    answer = await allow(browser, page)
  } else answer = await browser.get(authorizeUrl(authorizeParams(clientId)))
  const location = String(answer.headers.location)
  const code = new URL(location).searchParams.get('code')
  if (!code) throw new Error(`no code: ${location}`)
  return code
}

/** A client with an access token, a refresh token and a code not yet redeemed. */
async function holdings() {
  const clientId = publish()
  const browser = new Browser(t.app)
  const first = await codeFor(browser, clientId, true)
  const exchanged = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: first,
    code_verifier: VERIFIER,
    client_id: clientId,
  })
  expect(exchanged.statusCode).toBe(200)
  const tokens = exchanged.json<{ access_token: string; refresh_token: string }>()
  const code = await codeFor(browser, clientId, false)
  return { clientId, code, browser, ...tokens }
}
type Holdings = Awaited<ReturnType<typeof holdings>>

const redeemHeldCode = (app: TestApp, held: Holdings) =>
  tokenRequest(app, {
    grant_type: 'authorization_code',
    code: held.code,
    code_verifier: VERIFIER,
    client_id: held.clientId,
  })

const refreshHeld = (app: TestApp, held: Holdings) =>
  tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: held.refresh_token,
    client_id: held.clientId,
  })

/** What the client holds stops: the code and the refresh token answer invalid_client, the access token introspects inactive. */
async function expectHoldingsStopped(app: TestApp, held: Holdings) {
  const code = await redeemHeldCode(app, held)
  expect(code.statusCode).toBe(401)
  expect(code.json()).toMatchObject({ error: 'invalid_client' })
  const refresh = await refreshHeld(app, held)
  expect(refresh.statusCode).toBe(401)
  expect(refresh.json()).toMatchObject({ error: 'invalid_client' })
  expect(await introspect(app, rs, held.access_token)).toEqual({ active: false })
}

describe('the operator closes the door: what such clients hold stops working', () => {
  it.each([
    ['CLIENT_METADATA_DOCUMENTS=false', () => ({ CLIENT_METADATA_DOCUMENTS: 'false' })],
    ['its host denied', () => ({ CLIENT_METADATA_DENIED_HOSTS: new URL(server.origin).host })],
    ['its host off the allow list', () => ({ CLIENT_METADATA_ALLOWED_HOSTS: '*.agents.example' })],
  ])(
    '%s: codes and refresh tokens invalid_client, access tokens inactive; on again, they work',
    async (_, env) => {
      const held = await holdings()
      expect(await introspect(t, rs, held.access_token)).toMatchObject({
        active: true,
        client_id: held.clientId,
      })
      // The same database, served by an instance whose operator has closed the door.
      const closed = await buildTestApp({
        database: t.database,
        env: { ...GENEROUS_LIMITS, CLIENT_METADATA_TEST_CA: server.caPath, ...env() },
      })
      try {
        await expectHoldingsStopped(closed, held)
        // The signed-in user's remembered consent gets no code either: the error page says why.
        const returning = new Browser(closed.app)
        for (const [name, value] of held.browser.jar.cookies) returning.jar.cookies.set(name, value)
        const again = await returning.get(authorizeUrl(authorizeParams(held.clientId)))
        expect(again.statusCode).toBe(400)
        expect(again.headers.location).toBeUndefined()
        expect(again.body).toMatch(/does not accept applications identified by a URL|are not accepted here/)
        // A registered client is not touched by the metadata-document policy.
        const registered = await closed.services.clients.createClient({
          name: 'Registered',
          redirect_uris: [REDIRECT],
        })
        expect(closed.services.clients.isAcceptedClientId(registered.id)).toBe(true)
      } finally {
        await closed.app.close()
        await closed.admin.close()
      }
      // Nothing was revoked or spent: the instance with the door open serves the same tokens.
      expect(await introspect(t, rs, held.access_token)).toMatchObject({ active: true })
      const refreshed = await refreshHeld(t, held)
      expect(refreshed.statusCode).toBe(200)
      const redeemed = await redeemHeldCode(t, held)
      expect(redeemed.statusCode).toBe(200)
    },
  )

  it('a blocked client_id URL: codes, refresh and access tokens stop for good', async () => {
    const held = await holdings()
    const blocked = await t.admin.inject({
      method: 'POST',
      url: '/admin/blocked-clients',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { client_id: held.clientId },
    })
    expect(blocked.statusCode).toBe(201)
    await expectHoldingsStopped(t, held)
    // Unblocked, the row stays disabled and the grants stay revoked.
    const unblocked = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/blocked-clients?client_id=${encodeURIComponent(held.clientId)}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    })
    expect(unblocked.statusCode).toBe(204)
    expect(await introspect(t, rs, held.access_token)).toEqual({ active: false })
    const again = await refreshHeld(t, held)
    expect(again.statusCode).toBe(401)
  })
})
