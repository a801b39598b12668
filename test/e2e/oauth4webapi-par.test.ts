import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { LINKS_API, registerApi } from '../helpers/resource-apis.js'

/**
 * Pushed authorization requests (RFC 9126) with oauth4webapi's PAR support over real HTTP: the
 * request is pushed, the browser carries only client_id and request_uri, and the flow runs through
 * sign-in and consent to tokens; with resource indicators, DPoP (a proof on the PAR request binds
 * the code) and a Client ID Metadata Document client.
 */

const insecure = { [oauth.allowInsecureRequests]: true }

let t: TestApp
let as: oauth.AuthorizationServer
let documents: DocumentServer

beforeAll(async () => {
  documents = await startDocumentServer()
  ;({ t } = await listenTestApp({ env: { CLIENT_METADATA_TEST_CA: documents.caPath } }))
  const issuer = new URL(t.config.issuer)
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oauth2' }),
  )
  await registerApi(t, LINKS_API)
})
afterAll(async () => {
  await t.close()
  await documents.close()
})

/** Pushes an authorization request for `client`; the URL to send the browser to, and what the flow needs after. */
async function push(
  client: oauth.Client,
  options: { redirectUri?: string; extra?: string[][]; DPoP?: oauth.DPoPHandle } = {},
) {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const redirectUri = options.redirectUri ?? REDIRECT_URI
  const response = await oauth.pushedAuthorizationRequest(
    as,
    client,
    oauth.None(),
    [
      ['redirect_uri', redirectUri],
      ['response_type', 'code'],
      ['scope', 'links:read'],
      ['state', state],
      ['code_challenge', await oauth.calculatePKCECodeChallenge(verifier)],
      ['code_challenge_method', 'S256'],
      ...(options.extra ?? []),
    ],
    { ...insecure, DPoP: options.DPoP },
  )
  const pushed = await oauth.processPushedAuthorizationResponse(as, client, response)
  const url = new URL(as.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    request_uri: pushed.request_uri,
  }).toString()
  return { pushed, url, verifier, state, redirectUri }
}

async function tokensFor(
  client: oauth.Client,
  p: Awaited<ReturnType<typeof push>>,
  callback: URL,
  DPoP?: oauth.DPoPHandle,
) {
  const params = oauth.validateAuthResponse(as, client, callback, p.state)
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    p.redirectUri,
    p.verifier,
    { ...insecure, DPoP },
  )
  return oauth.processAuthorizationCodeResponse(as, client, response)
}

describe('pushed authorization requests with oauth4webapi', () => {
  it('are announced in the metadata', () => {
    expect(as.pushed_authorization_request_endpoint).toBe(`${t.config.issuer}/api/oauth/par`)
    expect(as.require_pushed_authorization_requests).toBe(false)
  })

  it('a pushed request runs through sign-in and consent to tokens; the request_uri is spent', async () => {
    const s = await seed(t)
    const client: oauth.Client = { client_id: s.client.id }
    const p = await push(client)
    expect(p.pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/)
    expect(p.pushed.expires_in).toBe(60)
    // RFC 9126 §4: parameters beside client_id and request_uri are ignored, not used.
    p.url.searchParams.set('scope', 'links:write')
    p.url.searchParams.set('redirect_uri', 'https://attacker.example/cb')
    let consentPage = ''
    const browser = new HttpBrowser(new URL(t.config.issuer).origin)
    const callback = await browser.signInAndAllow(
      p.url.pathname + p.url.search,
      s.email,
      PASSWORD,
      (html) => {
        consentPage = html
      },
    )
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI)
    expect(consentPage).not.toContain('links:write')
    const tokens = await tokensFor(client, p, callback)
    expect(tokens.scope).toBe('links:read')
    expect(tokens.token_type).toBe('bearer')

    // Single use: the same request_uri again is an error page, never a redirect.
    const again = await browser.request(p.url.pathname + p.url.search)
    expect(again.res.status).toBe(400)
    expect(again.res.headers.get('location')).toBeNull()
    expect(again.body).toContain('expired, was already used')
  })

  it('carries resource indicators to the token', async () => {
    const s = await seed(t)
    const client: oauth.Client = { client_id: s.client.id }
    const p = await push(client, { extra: [['resource', LINKS_API.resource]] })
    const callback = await new HttpBrowser(new URL(t.config.issuer).origin).signInAndAllow(
      p.url.pathname + p.url.search,
      s.email,
      PASSWORD,
    )
    const tokens = await tokensFor(client, p, callback)
    expect(decodeJwt(tokens.access_token).aud).toBe(LINKS_API.resource)
  })

  it('a DPoP proof on the PAR request binds the code to its key', async () => {
    const s = await seed(t)
    const client: oauth.Client = { client_id: s.client.id }
    const keyPair = await generateKeyPair('ES256', { extractable: false })
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey))
    const dpop = oauth.DPoP(client, keyPair)
    const browser = new HttpBrowser(new URL(t.config.issuer).origin)

    const p = await push(client, { DPoP: dpop })
    const callback = await browser.signInAndAllow(p.url.pathname + p.url.search, s.email, PASSWORD)
    // Without a proof of that key the code is refused (RFC 9449 §10).
    const refused = await tokensFor(client, p, callback).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError)
    expect((refused as oauth.ResponseBodyError).error).toBe('invalid_grant')

    // Consent is remembered now: the second pushed request comes straight back with a code.
    const second = await push(client, { DPoP: dpop })
    const back = await browser.follow(await browser.request(second.url.pathname + second.url.search))
    const tokens = await tokensFor(client, second, new URL(back.location!), dpop)
    expect(tokens.token_type).toBe('dpop')
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })
  })

  it('a dpop_jkt that is not the proof’s key is invalid_dpop_proof', async () => {
    const s = await seed(t)
    const client: oauth.Client = { client_id: s.client.id }
    const dpop = oauth.DPoP(client, await generateKeyPair('ES256', { extractable: false }))
    const other = await calculateJwkThumbprint(
      await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey),
    )
    const refused = await push(client, { DPoP: dpop, extra: [['dpop_jkt', other]] }).catch(
      (err: unknown) => err,
    )
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError)
    expect((refused as oauth.ResponseBodyError).error).toBe('invalid_dpop_proof')
  })

  it('works for a Client ID Metadata Document client', async () => {
    const redirect = 'https://agent.example/callback'
    const clientId = documents.publish(
      '/par-agent.json',
      clientDocument(documents.url('/par-agent.json'), { redirect_uris: [redirect] }),
    )
    const email = `par-cimd-${Math.random().toString(36).slice(2)}@example.com`
    await t.services.users.createUser({ email, password: PASSWORD })
    const client: oauth.Client = { client_id: clientId }
    const p = await push(client, { redirectUri: redirect })
    const callback = await new HttpBrowser(new URL(t.config.issuer).origin).signInAndAllow(
      p.url.pathname + p.url.search,
      email,
      PASSWORD,
    )
    const tokens = await tokensFor(client, p, callback)
    expect(tokens.scope).toBe('links:read')
  })

  it('a metadata document’s require_pushed_authorization_requests refuses its plain requests', async () => {
    const redirect = 'https://strict-agent.example/callback'
    const clientId = documents.publish(
      '/par-strict.json',
      clientDocument(documents.url('/par-strict.json'), {
        redirect_uris: [redirect],
        require_pushed_authorization_requests: true,
      }),
    )
    const client: oauth.Client = { client_id: clientId }
    const verifier = oauth.generateRandomCodeVerifier()
    const url = new URL(as.authorization_endpoint!)
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirect,
      scope: 'links:read',
      state: 'plain',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    }).toString()
    const plain = await fetch(url, { redirect: 'manual' })
    expect(plain.status).toBe(302)
    const back = new URL(plain.headers.get('location')!)
    expect(`${back.origin}${back.pathname}`).toBe(redirect)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    // Pushed, it goes to sign-in as usual.
    const p = await push(client, { redirectUri: redirect })
    const started = await fetch(p.url, { redirect: 'manual' })
    expect(started.status).toBe(303)
    expect(started.headers.get('location')).toMatch(/^\/login\?request=/)
  })
})
