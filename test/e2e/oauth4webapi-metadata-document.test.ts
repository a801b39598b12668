import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

/** oauth4webapi, a strict client, against a Client ID Metadata Document client (issue 27). */

let t: TestApp
let issuer: URL
let server: DocumentServer
const REDIRECT = 'https://agent.example/callback'
beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t } = await listenTestApp({ env: { CLIENT_METADATA_TEST_CA: server.caPath } }))
  issuer = new URL(t.config.issuer)
})
afterAll(async () => {
  await t.close()
  await server.close()
})

it('completes the flow and refreshes with a client_id URL', async () => {
  const clientId = server.publish(
    '/agent.json',
    clientDocument(server.url('/agent.json'), { redirect_uris: [REDIRECT] }),
  )
  const email = `cimd-e2e-${Math.random().toString(36).slice(2)}@example.com`
  await t.services.users.createUser({ email, password: PASSWORD })
  const client: oauth.Client = { client_id: clientId }
  const as = await discover(issuer)
  expect(as.client_id_metadata_document_supported).toBe(true)
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'links:read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString()
  const callback = await new HttpBrowser(issuer.origin).signInAndAllow(
    url.pathname + url.search,
    email,
    PASSWORD,
  )
  const params = oauth.validateAuthResponse(as, client, callback, state)
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    REDIRECT,
    verifier,
    insecure,
  )
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response)
  expect(tokens.scope).toBe('links:read')
  const refreshed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
  )
  expect(refreshed.access_token).toBeTruthy()
})
