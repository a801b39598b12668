import * as client from 'openid-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { linkauthOpenIdClient } from '../../docs/examples/openid-client.js'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { HttpBrowser } from '../helpers/http-browser.js'

/**
 * openid-client against a Client ID Metadata Document client (issue 27): the application's client_id
 * is the https URL of its document (served by a local HTTPS test server), with the settings
 * docs/integrating.md gives (docs/examples/openid-client.ts): discovery with algorithm 'oauth2',
 * PKCE, consent, the state and RFC 9207 iss checks, code exchange, refresh, revocation.
 */

let t: TestApp
let issuer: string
let documents: DocumentServer
const REDIRECT = 'https://agent.example/callback'
beforeAll(async () => {
  documents = await startDocumentServer()
  ;({ t, issuer } = await listenTestApp({ env: { CLIENT_METADATA_TEST_CA: documents.caPath } }))
})
afterAll(async () => {
  await t?.close()
  await documents?.close()
})

it('openid-client completes the flow, refreshes and revokes with a client_id URL', async () => {
  const clientId = documents.publish(
    '/openid-client-app.json',
    clientDocument(documents.url('/openid-client-app.json'), {
      client_name: 'Notes app',
      redirect_uris: [REDIRECT],
    }),
  )
  const email = `cimd-openid-client-${Math.random().toString(36).slice(2)}@example.com`
  await t.services.users.createUser({ email, password: PASSWORD })

  const app = await linkauthOpenIdClient(issuer, clientId, REDIRECT)
  const { url, pending } = await app.startAuthorization('links:read links:write')
  expect(url.origin).toBe(issuer)
  expect(url.searchParams.get('client_id')).toBe(clientId)
  expect(url.searchParams.get('code_challenge_method')).toBe('S256')

  let consentPage = ''
  const callback = await new HttpBrowser(issuer).signInAndAllow(
    url.pathname + url.search,
    email,
    PASSWORD,
    (html) => (consentPage = html),
  )
  // The user saw the self-declared name beside the host that vouches for it.
  const host = new URL(clientId).host
  expect(consentPage).toContain('<span class="app-name">Notes app</span>')
  expect(consentPage).toContain(`<strong class="client-host">${host}</strong> vouches for it`)
  expect(callback.origin + callback.pathname).toBe(REDIRECT)

  const tokens = await app.finishAuthorization(callback, pending)
  expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 600, scope: 'links:read links:write' })
  expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  const row = await t.database.db
    .selectFrom('clients')
    .select('kind')
    .where('id', '=', clientId)
    .executeTakeFirstOrThrow()
  expect(row.kind).toBe('metadata_document')

  const refreshed = await app.refresh(tokens.refresh_token!)
  expect(refreshed.access_token).not.toBe(tokens.access_token)
  expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
  expect(refreshed.scope).toBe('links:read links:write')

  await app.revoke(refreshed.refresh_token!)
  const afterRevoke = await app.refresh(refreshed.refresh_token!).catch((e: unknown) => e)
  expect(afterRevoke).toBeInstanceOf(client.ResponseBodyError)
  expect((afterRevoke as client.ResponseBodyError).error).toBe('invalid_grant')
})

it('a callback from another authorization (state mismatch) is refused before any exchange', async () => {
  const clientId = documents.publish(
    '/openid-client-state.json',
    clientDocument(documents.url('/openid-client-state.json'), { redirect_uris: [REDIRECT] }),
  )
  const email = `cimd-openid-client-${Math.random().toString(36).slice(2)}@example.com`
  await t.services.users.createUser({ email, password: PASSWORD })
  const app = await linkauthOpenIdClient(issuer, clientId, REDIRECT)
  const first = await app.startAuthorization('links:read')
  const second = await app.startAuthorization('links:read')
  const callback = await new HttpBrowser(issuer).signInAndAllow(
    first.url.pathname + first.url.search,
    email,
    PASSWORD,
  )
  const refused = await app.finishAuthorization(callback, second.pending).catch((e: unknown) => e)
  expect(refused).toBeInstanceOf(client.ClientError)
  expect((refused as client.ClientError).code).toBe('OAUTH_INVALID_RESPONSE')
  // The code was never spent: the right pending state still exchanges it.
  expect((await app.finishAuthorization(callback, first.pending)).scope).toBe('links:read')
})
