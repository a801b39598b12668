import Fastify, { type FastifyInstance } from 'fastify'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT, type CryptoKey } from 'jose'
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import {
  createDpopNonceSource,
  createRedisReplayStore,
  linkauthResource,
  type ResourceVerifier,
} from '@linkauth/resource'
import { accessTokenHash } from '@linkauth/resource/dpop'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParty } from '../helpers/fixtures.js'
import { freePort } from '../helpers/net.js'
import { checkRedis, TEST_REDIS_URL } from '../helpers/redis.js'
import {
  accessToken,
  jwksOnlyVerifier,
  resignedToken,
  startAuthServer,
  type ListeningAuthServer,
} from '../helpers/resource.js'

/**
 * RFC 9449 §7 at a resource API: a DPoP-bound token (`cnf.jkt`) is accepted only with a proof made
 * with its key for this method and URL, carrying the token's hash; as a bearer token it is refused;
 * every refusal of a DPoP request is a `DPoP` challenge. Real tokens of a live authorization server,
 * bound by re-signing them with its key (the server's own DPoP token endpoint is tested elsewhere).
 */

interface Holder {
  privateKey: CryptoKey
  jwk: JWK
  jkt: string
}

async function dpopKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<Holder> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = await exportJWK(publicKey)
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') }
}

async function proof(
  holder: Holder,
  claims: { htm: string; htu: string; token?: string; nonce?: string; iat?: number },
  alg: 'ES256' | 'EdDSA' = 'ES256',
): Promise<string> {
  return new SignJWT({
    htm: claims.htm,
    htu: claims.htu,
    jti: randomUUID(),
    ...(claims.token ? { ath: accessTokenHash(claims.token) } : {}),
    ...(claims.nonce ? { nonce: claims.nonce } : {}),
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg, jwk: holder.jwk })
    .setIssuedAt(claims.iat)
    .sign(holder.privateKey)
}

let server: ListeningAuthServer
let verifier: ResourceVerifier
let api: FastifyInstance
let base: string
let metadataUrl: string
let plainToken: string
let holder: Holder
let boundToken: string

/**
 * An API on a port of its own. A proof's htu must name the URL the client called; with `ownUrl` the
 * plugin is told that URL, otherwise it takes the resource identifier's origin (its default).
 */
async function protectedApi(
  v: ResourceVerifier,
  { ownUrl = false } = {},
): Promise<{ app: FastifyInstance; url: string }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = Fastify()
  await app.register(linkauthResource, { verifier: v, realm: 'links', ...(ownUrl ? { publicUrl: url } : {}) })
  app.get('/links', { config: { scopes: ['links:read'] } }, async (request) => ({
    sub: request.auth!.sub,
    jkt: request.auth!.cnf?.jkt ?? null,
  }))
  app.post('/links', { config: { scopes: ['links:write'] } }, async () => ({ created: true }))
  await app.listen({ port, host: '127.0.0.1' })
  return { app, url }
}

beforeAll(async () => {
  server = await startAuthServer()
  holder = await dpopKey()
  const party = await createParty(server.t, { grantScopes: ['links:read'] })
  plainToken = await accessToken(server.t, party)
  boundToken = resignedToken(server.t, plainToken, { cnf: { jkt: holder.jkt } })
  verifier = await jwksOnlyVerifier(server)
  ;({ app: api, url: base } = await protectedApi(verifier, { ownUrl: true }))
  metadataUrl = `${server.issuer}/.well-known/oauth-protected-resource/api`
})
afterAll(async () => {
  await api.close()
  await verifier.close()
  await server.close()
})

async function call(
  url: string,
  init: { method?: string; authorization?: string; dpop?: string | string[] } = {},
) {
  const headers = new Headers()
  if (init.authorization) headers.set('authorization', init.authorization)
  for (const value of [init.dpop ?? []].flat()) headers.append('dpop', value)
  const res = await fetch(url, { method: init.method ?? 'GET', headers })
  const text = await res.text()
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate') ?? '',
    nonce: res.headers.get('dpop-nonce'),
    json: () => JSON.parse(text) as Record<string, unknown>,
  }
}

describe('a DPoP-bound token with its proof', () => {
  it('is accepted, and the claims carry the binding', async () => {
    const res = await call(`${base}/links`, {
      authorization: `DPoP ${boundToken}`,
      dpop: await proof(holder, { htm: 'GET', htu: `${base}/links`, token: boundToken }),
    })
    expect(res.status).toBe(200)
    expect(res.json()).toMatchObject({ jkt: holder.jkt })
  })

  it('htu is compared without the query (§4.3 item 9), and the scheme name in any case', async () => {
    const res = await call(`${base}/links?page=2`, {
      authorization: `dpop ${boundToken}`,
      dpop: await proof(holder, { htm: 'GET', htu: `${base}/links`, token: boundToken }),
    })
    expect(res.status).toBe(200)
  })

  it('an EdDSA key works as well as ES256', async () => {
    const ed = await dpopKey('EdDSA')
    const token = resignedToken(server.t, plainToken, { cnf: { jkt: ed.jkt } })
    const res = await call(`${base}/links`, {
      authorization: `DPoP ${token}`,
      dpop: await proof(ed, { htm: 'GET', htu: `${base}/links`, token }, 'EdDSA'),
    })
    expect(res.status).toBe(200)
  })
})

describe('refused, each with a DPoP challenge (§7.1)', () => {
  const dpopError = (error: string) =>
    new RegExp(
      `^DPoP realm="links", resource_metadata="[^"]+", algs="ES256 EdDSA Ed25519 PS256", error="${error}", error_description="[^"]+"`,
    )

  it('the same proof twice: the second is a replay', async () => {
    const once = await proof(holder, { htm: 'GET', htu: `${base}/links`, token: boundToken })
    expect((await call(`${base}/links`, { authorization: `DPoP ${boundToken}`, dpop: once })).status).toBe(
      200,
    )
    const again = await call(`${base}/links`, { authorization: `DPoP ${boundToken}`, dpop: once })
    expect(again.status).toBe(401)
    expect(again.challenge).toMatch(dpopError('invalid_dpop_proof'))
    expect(again.json()).toEqual({
      error: 'invalid_dpop_proof',
      error_description: 'The DPoP proof was already used.',
    })
  })

  type ProofCase = [string, () => Promise<string | string[] | undefined>, string]
  it.each<ProofCase>([
    ['no proof', async () => undefined, 'invalid_dpop_proof'],
    ['two proofs', async () => [await good(), await good()], 'invalid_dpop_proof'],
    [
      'a proof for another method',
      async () => proof(holder, { htm: 'POST', htu: `${base}/links`, token: boundToken }),
      'invalid_dpop_proof',
    ],
    [
      'a proof for another URL',
      async () => proof(holder, { htm: 'GET', htu: `${base}/other`, token: boundToken }),
      'invalid_dpop_proof',
    ],
    [
      'a proof for another host',
      async () => proof(holder, { htm: 'GET', htu: 'https://api.example.com/links', token: boundToken }),
      'invalid_dpop_proof',
    ],
    [
      'a proof without ath',
      async () => proof(holder, { htm: 'GET', htu: `${base}/links` }),
      'invalid_dpop_proof',
    ],
    [
      'a proof for another token',
      async () => proof(holder, { htm: 'GET', htu: `${base}/links`, token: plainToken }),
      'invalid_dpop_proof',
    ],
    [
      'an old proof',
      async () =>
        proof(holder, {
          htm: 'GET',
          htu: `${base}/links`,
          token: boundToken,
          iat: Math.floor(Date.now() / 1000) - 600,
        }),
      'invalid_dpop_proof',
    ],
    [
      'a proof made with another key (§7.1: invalid key binding)',
      async () => proof(await dpopKey(), { htm: 'GET', htu: `${base}/links`, token: boundToken }),
      'invalid_token',
    ],
  ])('%s', async (_case, make, error) => {
    const res = await call(`${base}/links`, { authorization: `DPoP ${boundToken}`, dpop: await make() })
    expect(res.status).toBe(401)
    expect(res.challenge).toMatch(dpopError(error))
    expect(res.json()).toMatchObject({ error })
    expect(JSON.stringify(res.json()) + res.challenge).not.toContain(boundToken)
  })

  async function good(): Promise<string> {
    return proof(holder, { htm: 'GET', htu: `${base}/links`, token: boundToken })
  }

  it('a token without cnf under the DPoP scheme: it is not DPoP-bound', async () => {
    const res = await call(`${base}/links`, {
      authorization: `DPoP ${plainToken}`,
      dpop: await proof(holder, { htm: 'GET', htu: `${base}/links`, token: plainToken }),
    })
    expect(res.status).toBe(401)
    expect(res.challenge).toMatch(dpopError('invalid_token'))
  })

  it('a missing scope: 403 with a DPoP challenge naming it', async () => {
    const res = await call(`${base}/links`, {
      method: 'POST',
      authorization: `DPoP ${boundToken}`,
      dpop: await proof(holder, { htm: 'POST', htu: `${base}/links`, token: boundToken }),
    })
    expect(res.status).toBe(403)
    expect(res.challenge).toMatch(/^DPoP .*error="insufficient_scope".*scope="links:write"$/)
  })

  it('a DPoP header value that is not "DPoP <token>": 400 invalid_request', async () => {
    const res = await call(`${base}/links`, { authorization: 'DPoP', dpop: await good() })
    expect(res.status).toBe(400)
    expect(res.json()).toMatchObject({ error: 'invalid_request' })
  })
})

describe('a DPoP-bound token as a bearer token (§7.2)', () => {
  it('is refused: a thief with the token alone gets nothing', async () => {
    const res = await call(`${base}/links`, { authorization: `Bearer ${boundToken}` })
    expect(res.status).toBe(401)
    expect(res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof.',
    })
    expect(res.challenge).toMatch(
      /^Bearer .*error="invalid_token".*, DPoP realm="links", resource_metadata="[^"]+", algs="[^"]+"$/,
    )
  })

  it('is refused by verify() and verifyAuthorization() too, which never see a proof', async () => {
    await expect(verifier.verify(boundToken)).rejects.toMatchObject({ code: 'dpop_bound_token' })
    await expect(verifier.verifyAuthorization(`Bearer ${boundToken}`)).rejects.toMatchObject({
      code: 'dpop_bound_token',
    })
  })

  it('while a plain bearer token is still accepted next to DPoP', async () => {
    const res = await call(`${base}/links`, { authorization: `Bearer ${plainToken}` })
    expect(res.status).toBe(200)
    expect(res.json()).toMatchObject({ jkt: null })
  })

  it('no token at all: both challenges, so a client learns both schemes', async () => {
    const res = await call(`${base}/links`)
    expect(res.status).toBe(401)
    expect(res.challenge).toBe(
      `Bearer realm="links", resource_metadata="${metadataUrl}", DPoP realm="links", resource_metadata="${metadataUrl}", algs="ES256 EdDSA Ed25519 PS256"`,
    )
  })
})

describe('settings', () => {
  it('dpop.required: bearer tokens refused with a DPoP challenge, and the metadata says so (RFC 9728)', async () => {
    const strict = await jwksOnlyVerifier(server, { dpop: { required: true, algorithms: ['ES256'] } })
    const { app, url } = await protectedApi(strict)
    try {
      const bearer = await call(`${url}/links`, { authorization: `Bearer ${plainToken}` })
      expect(bearer.status).toBe(401)
      expect(bearer.challenge).toMatch(
        /^DPoP .*algs="ES256", error="invalid_token", error_description="This API accepts DPoP-bound access tokens only."$/,
      )
      const none = await call(`${url}/links`)
      expect(none.challenge).toMatch(/^DPoP realm="links", resource_metadata="[^"]+", algs="ES256"$/)
      const doc = await (await fetch(`${url}/.well-known/oauth-protected-resource/api`)).json()
      expect(doc).toMatchObject({
        dpop_signing_alg_values_supported: ['ES256'],
        dpop_bound_access_tokens_required: true,
      })
      // The plugin's default public URL is the resource identifier's origin, not where this test
      // listens: a proof naming the listening URL is for another URL.
      const elsewhere = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, { htm: 'GET', htu: `${url}/links`, token: boundToken }),
      })
      expect(elsewhere.status).toBe(401)
      const origin = new URL(strict.resource).origin
      const right = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, { htm: 'GET', htu: `${origin}/links`, token: boundToken }),
      })
      expect(right.status).toBe(200)
    } finally {
      await app.close()
      await strict.close()
    }
  })

  it('dpop: false: the DPoP scheme is not one this API takes (a bare Bearer challenge)', async () => {
    const bearerOnly = await jwksOnlyVerifier(server, { dpop: false })
    const { app, url } = await protectedApi(bearerOnly)
    try {
      const res = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, { htm: 'GET', htu: `${url}/links`, token: boundToken }),
      })
      expect(res.status).toBe(401)
      expect(res.challenge).toBe(`Bearer realm="links", resource_metadata="${metadataUrl}"`)
      const doc = await (await fetch(`${url}/.well-known/oauth-protected-resource/api`)).json()
      expect(doc).not.toHaveProperty('dpop_signing_alg_values_supported')
      // Bound tokens stay refused as bearer tokens even where DPoP is off.
      expect((await call(`${url}/links`, { authorization: `Bearer ${boundToken}` })).status).toBe(401)
    } finally {
      await app.close()
      await bearerOnly.close()
    }
  })

  it('server nonces (§9): use_dpop_nonce with a DPoP-Nonce header, then the retry with it works', async () => {
    const nonces = createDpopNonceSource({ secret: 'n'.repeat(32) })
    const withNonce = await jwksOnlyVerifier(server, { dpop: { nonce: nonces } })
    const { app, url } = await protectedApi(withNonce)
    const origin = new URL(withNonce.resource).origin
    try {
      const first = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, { htm: 'GET', htu: `${origin}/links`, token: boundToken }),
      })
      expect(first.status).toBe(401)
      expect(first.challenge).toMatch(/^DPoP .*error="use_dpop_nonce"/)
      expect(first.json()).toMatchObject({ error: 'use_dpop_nonce' })
      expect(first.nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{32}$/)
      const retry = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, {
          htm: 'GET',
          htu: `${origin}/links`,
          token: boundToken,
          nonce: first.nonce!,
        }),
      })
      expect(retry.status).toBe(200)
      const forged = await call(`${url}/links`, {
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, {
          htm: 'GET',
          htu: `${origin}/links`,
          token: boundToken,
          nonce: `${first.nonce!.split('.')[0]}.${'A'.repeat(32)}`,
        }),
      })
      expect(forged.status).toBe(401)
      expect(forged.json()).toMatchObject({ error: 'use_dpop_nonce' })
    } finally {
      await app.close()
      await withNonce.close()
    }
  })
})

describe('createDpopNonceSource', () => {
  it('accepts a nonce in its period and the next, and nothing older, forged or from another secret', () => {
    let now = 1_000_000
    const a = createDpopNonceSource({ secret: 'a'.repeat(32), periodSeconds: 60, now: () => now })
    const b = createDpopNonceSource({ secret: 'b'.repeat(32), periodSeconds: 60, now: () => now })
    const nonce = a.current()
    expect(a.accepts(nonce)).toBe(true)
    expect(b.accepts(nonce)).toBe(false)
    now += 60
    expect(a.accepts(nonce)).toBe(true)
    expect(a.current()).not.toBe(nonce)
    now += 60
    expect(a.accepts(nonce)).toBe(false)
    for (const bad of ['', 'x', `${nonce}x`, nonce.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))])
      expect(a.accepts(bad)).toBe(false)
    expect(() => createDpopNonceSource({ secret: 'short' })).toThrow(TypeError)
  })
})

describe('createRedisReplayStore', () => {
  let redisUp = false
  let redis: Redis | undefined
  beforeAll(async () => {
    redisUp = await checkRedis()
    if (redisUp) redis = new Redis(TEST_REDIS_URL)
  })
  afterAll(async () => {
    redis?.disconnect()
  })

  it('two instances of one API share it: a proof accepted by one is a replay at the other', async (ctx) => {
    if (!redisUp) return ctx.skip()
    const store = () => createRedisReplayStore(redis!, `dpop-test-${randomUUID()}:`)
    const shared = store()
    const one = await jwksOnlyVerifier(server, { dpop: { replayStore: shared } })
    const two = await jwksOnlyVerifier(server, { dpop: { replayStore: shared } })
    try {
      const htu = `${new URL(one.resource).origin}/links`
      const request = async () => ({
        authorization: `DPoP ${boundToken}`,
        dpop: await proof(holder, { htm: 'GET', htu, token: boundToken }),
        method: 'GET',
        url: htu,
      })
      const req = await request()
      await expect(one.verifyRequest(req, ['links:read'])).resolves.toMatchObject({
        cnf: { jkt: holder.jkt },
      })
      await expect(two.verifyRequest(req, ['links:read'])).rejects.toMatchObject({
        error: 'invalid_dpop_proof',
        failure: 'replayed_proof',
      })
      // Concurrent: of ten instances handed one fresh proof at once, exactly one accepts it.
      const fresh = await request()
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).verifyRequest(fresh, ['links:read'])),
      )
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    } finally {
      await one.close()
      await two.close()
    }
  })
})
