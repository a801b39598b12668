import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { hiddenField, PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import { createResourceServer, introspectRequest, type ResourceServerCredentials } from '../helpers/tokens.js'
import { discover, insecure } from '../helpers/oauth4webapi.js'

/**
 * DPoP (RFC 9449) at the authorization server, with a strict third-party client library
 * (oauth4webapi's DPoP handle) over real HTTP: tokens bound to the client's key, refresh with the
 * same key only, a proof used once, server nonces, dpop_jkt, and the per-client and global rules.
 */

interface Server {
  t: TestApp
  issuer: URL
  as: oauth.AuthorizationServer
}

async function start(env: Record<string, string> = {}): Promise<Server> {
  const { t } = await listenTestApp({ env })
  const issuer = new URL(t.config.issuer)
  const as = await discover(issuer)
  return { t, issuer, as }
}

const newKeyPair = () => generateKeyPair('ES256', { extractable: false })

/**
 * The browser's part: open the authorize URL, sign in, Allow when asked (a user who consented before
 * is sent back at once). Returns the URL the browser is sent back to.
 */
async function signInAndAllow(server: Server, path: string, email: string): Promise<URL> {
  const browser = new HttpBrowser(server.issuer.origin)
  const signIn = await browser.follow(await browser.request(path))
  if (signIn.location) return new URL(signIn.location)
  const consent = await browser.follow(
    await browser.request('/login', {
      method: 'POST',
      form: {
        email,
        password: PASSWORD,
        csrf_token: hiddenField(signIn.body, 'csrf_token'),
        request: hiddenField(signIn.body, 'request'),
      },
    }),
  )
  if (consent.location) return new URL(consent.location)
  const decision = await browser.request('/oauth/authorize', {
    method: 'POST',
    form: {
      request: hiddenField(consent.body, 'request'),
      csrf_token: hiddenField(consent.body, 'csrf_token'),
      decision: 'allow',
    },
  })
  return new URL(decision.res.headers.get('location')!)
}

/** A signed-in user's authorization of a fresh client (or `clientId`), with extra parameters. */
async function authorize(
  server: Server,
  s: Awaited<ReturnType<typeof seed>>,
  extra: Record<string, string> = {},
) {
  const client: oauth.Client = { client_id: s.client.id }
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(server.as.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'links:read',
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString()
  const callback = await signInAndAllow(server, url.pathname + url.search, s.email)
  return { client, verifier, params: oauth.validateAuthResponse(server.as, client, callback, state) }
}

async function exchange(server: Server, a: Awaited<ReturnType<typeof authorize>>, DPoP?: oauth.DPoPHandle) {
  const response = await oauth.authorizationCodeGrantRequest(
    server.as,
    a.client,
    oauth.None(),
    a.params,
    REDIRECT_URI,
    a.verifier,
    { ...insecure, DPoP },
  )
  return oauth.processAuthorizationCodeResponse(server.as, a.client, response)
}

async function refresh(server: Server, client: oauth.Client, refreshToken: string, DPoP?: oauth.DPoPHandle) {
  const response = await oauth.refreshTokenGrantRequest(server.as, client, oauth.None(), refreshToken, {
    ...insecure,
    DPoP,
  })
  return oauth.processRefreshTokenResponse(server.as, client, response)
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal')
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(oauth.ResponseBodyError)
      return err as oauth.ResponseBodyError
    },
  )

describe('DPoP with the default settings', () => {
  let server: Server
  let rs: ResourceServerCredentials
  beforeAll(async () => {
    server = await start()
    rs = await createResourceServer(server.t)
  })
  afterAll(async () => server.t.close())

  it('is announced in the metadata', () => {
    expect(server.as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'EdDSA']))
  })

  it('binds the tokens to the key: DPoP type, cnf.jkt, introspection; refresh with that key only', async () => {
    const s = await seed(server.t)
    const keyPair = await newKeyPair()
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey))
    const a = await authorize(server, s)
    const dpop = oauth.DPoP(a.client, keyPair)

    const tokens = await exchange(server, a, dpop)
    expect(tokens.token_type).toBe('dpop')
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt })

    const introspected = await introspectRequest(
      server.t,
      { token: tokens.access_token },
      `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`,
    )
    expect(introspected.json()).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } })

    // Refresh with the same key: still DPoP, still bound.
    const refreshed = await refresh(server, a.client, tokens.refresh_token!, dpop)
    expect(refreshed.token_type).toBe('dpop')
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt })

    // Another key, or none at all (a stolen refresh token): invalid_grant, and nothing is revoked.
    const thief = oauth.DPoP(a.client, await newKeyPair())
    expect((await refusal(refresh(server, a.client, refreshed.refresh_token!, thief))).error).toBe(
      'invalid_grant',
    )
    expect((await refusal(refresh(server, a.client, refreshed.refresh_token!))).error).toBe('invalid_grant')
    const again = await refresh(server, a.client, refreshed.refresh_token!, dpop)
    expect(again.token_type).toBe('dpop')
  })

  it('a Bearer flow stays Bearer; introspection says so and names no key', async () => {
    const s = await seed(server.t)
    const a = await authorize(server, s)
    const tokens = await exchange(server, a)
    expect(tokens.token_type).toBe('bearer')
    expect(decodeJwt(tokens.access_token).cnf).toBeUndefined()
    const introspected = await introspectRequest(
      server.t,
      { token: tokens.access_token },
      `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`,
    )
    expect(introspected.json()).toMatchObject({ active: true, token_type: 'Bearer' })
    expect(introspected.json().cnf).toBeUndefined()
    // A proof on refresh of an unbound family: the new access token is bound, the family stays unbound.
    const refreshed = await refresh(
      server,
      a.client,
      tokens.refresh_token!,
      oauth.DPoP(a.client, await newKeyPair()),
    )
    expect(refreshed.token_type).toBe('dpop')
    expect((await refresh(server, a.client, refreshed.refresh_token!)).token_type).toBe('bearer')
  })

  it('a proof is used once: the same proof again is invalid_dpop_proof, and the token stays usable', async () => {
    const s = await seed(server.t)
    const { privateKey, publicKey } = await newKeyPair()
    const a = await authorize(server, s)
    const tokens = await exchange(server, a, oauth.DPoP(a.client, { privateKey, publicKey }))
    const proof = await new SignJWT({ htm: 'POST', htu: server.as.token_endpoint, jti: crypto.randomUUID() })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: await exportJWK(publicKey) })
      .setIssuedAt()
      .sign(privateKey)
    const post = (refreshToken: string) =>
      fetch(server.as.token_endpoint!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          client_id: a.client.client_id,
        }),
      })
    const first = await post(tokens.refresh_token!)
    expect(first.status).toBe(200)
    const next = ((await first.json()) as { refresh_token: string }).refresh_token
    const replay = await post(next)
    expect(replay.status).toBe(400)
    expect(await replay.json()).toMatchObject({ error: 'invalid_dpop_proof' })
    // The refused request touched nothing: the token still refreshes with a fresh proof.
    expect(
      (await refresh(server, a.client, next, oauth.DPoP(a.client, { privateKey, publicKey }))).token_type,
    ).toBe('dpop')
  })

  it('dpop_jkt binds the code: another key or none is invalid_grant; the named key works', async () => {
    const s = await seed(server.t)
    const keyPair = await newKeyPair()
    const first = await authorize(server, s)
    const dpop = oauth.DPoP(first.client, keyPair)
    const dpopJkt = await dpop.calculateThumbprint()

    const other = await authorize(server, s, { dpop_jkt: dpopJkt })
    expect((await refusal(exchange(server, other, oauth.DPoP(other.client, await newKeyPair())))).error).toBe(
      'invalid_grant',
    )
    const none = await authorize(server, s, { dpop_jkt: dpopJkt })
    expect((await refusal(exchange(server, none))).error).toBe('invalid_grant')
    const right = await authorize(server, s, { dpop_jkt: dpopJkt })
    expect((await exchange(server, right, dpop)).token_type).toBe('dpop')
  })

  it('a malformed dpop_jkt is invalid_request in the redirect', async () => {
    const s = await seed(server.t)
    const error = await authorize(server, s, { dpop_jkt: 'not-a-thumbprint' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(oauth.AuthorizationResponseError)
    expect((error as oauth.AuthorizationResponseError).error).toBe('invalid_request')
  })

  it('a client registered with require_dpop: no proof is invalid_dpop_proof, and the code stays usable', async () => {
    const created = await server.t.admin.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { authorization: `Bearer ${server.t.config.adminToken}` },
      payload: { name: 'Strict App', redirect_uris: [REDIRECT_URI], require_dpop: true },
    })
    expect(created.statusCode).toBe(201)
    expect(created.json().require_dpop).toBe(true)
    const s = await seed(server.t)
    const client = await server.t.services.clients.getClient(created.json().client_id)
    const a = await authorize(server, { ...s, client })
    expect((await refusal(exchange(server, a))).error).toBe('invalid_dpop_proof')
    const dpop = oauth.DPoP(a.client, await newKeyPair())
    const tokens = await exchange(server, a, dpop)
    expect(tokens.token_type).toBe('dpop')
    expect((await refusal(refresh(server, a.client, tokens.refresh_token!))).error).toBe('invalid_dpop_proof')
    expect((await refresh(server, a.client, tokens.refresh_token!, dpop)).token_type).toBe('dpop')
  })
})

describe('DPoP with DPOP_NONCE_REQUIRED and DPOP_REQUIRED', () => {
  let server: Server
  beforeAll(async () => {
    server = await start({ DPOP_NONCE_REQUIRED: 'true', DPOP_REQUIRED: 'true' })
  })
  afterAll(async () => server.t.close())

  it('no proof: invalid_dpop_proof', async () => {
    const s = await seed(server.t)
    const a = await authorize(server, s)
    expect((await refusal(exchange(server, a))).error).toBe('invalid_dpop_proof')
  })

  it('use_dpop_nonce with a DPoP-Nonce header, then the retry with the nonce succeeds', async () => {
    const s = await seed(server.t)
    const a = await authorize(server, s)
    const dpop = oauth.DPoP(a.client, await newKeyPair())
    const err = await exchange(server, a, dpop).catch((e: unknown) => e)
    expect(oauth.isDPoPNonceError(err)).toBe(true)
    // oauth4webapi kept the nonce of the answer; the same code is still good (nothing was consumed).
    const tokens = await exchange(server, a, dpop)
    expect(tokens.token_type).toBe('dpop')
    // A refresh carries the nonce it learnt from the last answer.
    expect((await refresh(server, a.client, tokens.refresh_token!, dpop)).token_type).toBe('dpop')
  })
})
