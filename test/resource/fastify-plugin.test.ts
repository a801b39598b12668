import Fastify, { type FastifyInstance } from 'fastify'
import { createResourceVerifier, linkauthResource, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParty } from '../helpers/fixtures.js'
import {
  accessToken,
  jwksOnlyVerifier,
  resignedToken,
  startAuthServer,
  type ListeningAuthServer,
} from '../helpers/resource.js'
import { createResourceServer } from '../helpers/tokens.js'

/** A resource API protected by the plugin, over real HTTP, in front of a live authorization server. */

let server: ListeningAuthServer
let verifier: ResourceVerifier
let api: FastifyInstance
let base: string
/** Where the plugin says the API's metadata is (RFC 9728 §3.1): the resource here is `<issuer>/api`. */
let metadataUrl: string
let readToken: string
let writeToken: string
let userId: string
const handled: string[] = []

beforeAll(async () => {
  server = await startAuthServer()
  verifier = await jwksOnlyVerifier(server)
  api = Fastify()
  await api.register(linkauthResource, { verifier, realm: 'links' })
  api.get('/public', async (request) => ({ public: true, auth: request.auth ?? null }))
  api.get('/links', { config: { scopes: ['links:read'] } }, async (request) => {
    handled.push('GET /links')
    return { sub: request.auth!.sub, scopes: request.auth!.scopes }
  })
  api.post('/links', { config: { scopes: ['links:write'] } }, async (request) => {
    handled.push('POST /links')
    return { created: request.body }
  })
  api.get('/me', { config: { scopes: [] } }, async (request) => ({ client_id: request.auth!.client_id }))
  base = await api.listen({ port: 0, host: '127.0.0.1' })
  metadataUrl = `${server.issuer}/.well-known/oauth-protected-resource/api`
  expect(verifier.resource).toBe(`${server.issuer}/api`)

  const reader = await createParty(server.t, { grantScopes: ['links:read'] })
  userId = reader.userId
  readToken = await accessToken(server.t, reader)
  writeToken = await accessToken(
    server.t,
    await createParty(server.t, { grantScopes: ['links:read', 'links:write'] }),
  )
})
afterAll(async () => {
  await api.close()
  await verifier.close()
  await server.close()
})

/** The bare DPoP challenge that follows every Bearer one: the verifier takes DPoP-bound tokens too (RFC 9449 §7.2). */
const dpopChallenge = () =>
  `DPoP realm="links", resource_metadata="${metadataUrl}", algs="ES256 EdDSA Ed25519 PS256"`

async function call(path: string, init: { method?: string; authorization?: string; body?: string } = {}) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.authorization === undefined ? {} : { authorization: init.authorization }),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body,
  })
  const text = await res.text()
  return {
    status: res.status,
    challenge: res.headers.get('www-authenticate'),
    text,
    json: () => JSON.parse(text),
  }
}

describe('linkauthResource', () => {
  it('leaves routes without config.scopes alone', async () => {
    const res = await call('/public')
    expect(res.status).toBe(200)
    expect(res.json()).toEqual({ public: true, auth: null })
  })

  it('puts the verified claims on request.auth', async () => {
    const res = await call('/links', { authorization: `Bearer ${readToken}` })
    expect(res.status).toBe(200)
    expect(res.json()).toEqual({ sub: userId, scopes: ['links:read'] })
    expect((await call('/me', { authorization: `Bearer ${readToken}` })).status).toBe(200)
  })

  it('no token: 401 with a challenge of the realm and the metadata URL alone', async () => {
    const res = await call('/links')
    expect(res.status).toBe(401)
    expect(res.challenge).toBe(`Bearer realm="links", resource_metadata="${metadataUrl}", ${dpopChallenge()}`)
    expect(res.json()).toMatchObject({ error: 'invalid_token' })
  })

  it('a malformed header: 400 invalid_request', async () => {
    const res = await call('/links', { authorization: 'Bearer' })
    expect(res.status).toBe(400)
    expect(res.challenge).toMatch(
      /^Bearer realm="links", resource_metadata="[^"]+", error="invalid_request", error_description="[^"]+", DPoP realm="links", resource_metadata="[^"]+", algs="[^"]+"$/,
    )
    expect(res.json()).toMatchObject({ error: 'invalid_request' })
  })

  it('a token in the query as well as the header, or alone: 400 invalid_request', async () => {
    const both = await call(`/links?access_token=${readToken}`, { authorization: `Bearer ${readToken}` })
    expect(both.status).toBe(400)
    expect(both.json()).toMatchObject({ error: 'invalid_request' })
    const queryOnly = await call(`/links?access_token=${readToken}`)
    expect(queryOnly.status).toBe(400)
    expect(queryOnly.text).not.toContain(readToken)
  })

  it('an invalid token: 401 invalid_token with a description, the token not echoed', async () => {
    const forged = resignedToken(server.t, readToken, { aud: 'https://elsewhere.example' })
    const res = await call('/links', { authorization: `Bearer ${forged}` })
    expect(res.status).toBe(401)
    expect(res.challenge).toBe(
      `Bearer realm="links", resource_metadata="${metadataUrl}", error="invalid_token", error_description="The access token is not meant for this API.", ${dpopChallenge()}`,
    )
    expect(res.json()).toEqual({
      error: 'invalid_token',
      error_description: 'The access token is not meant for this API.',
    })
    expect(res.text + res.challenge).not.toContain(forged)
  })

  it('a missing scope: 403 insufficient_scope with scope, before the body is read and the handler runs', async () => {
    handled.length = 0
    const res = await call('/links', {
      method: 'POST',
      authorization: `Bearer ${readToken}`,
      body: '{not json',
    })
    expect(res.status).toBe(403)
    expect(res.challenge).toBe(
      `Bearer realm="links", resource_metadata="${metadataUrl}", error="insufficient_scope", error_description="The access token does not grant every scope this request needs.", scope="links:write", ${dpopChallenge()}`,
    )
    expect(res.json()).toMatchObject({ error: 'insufficient_scope' })
    expect(handled).toEqual([])

    const ok = await call('/links', {
      method: 'POST',
      authorization: `Bearer ${writeToken}`,
      body: '{"a":1}',
    })
    expect(ok.status).toBe(200)
    expect(handled).toEqual(['POST /links'])
  })

  it('a token that cannot be checked now (introspection unreachable): 503 with Retry-After', async () => {
    const introspecting = await createResourceVerifier({
      issuer: server.issuer,
      resource: server.t.config.accessTokenAudience,
      mode: 'introspection',
      credentials: await createResourceServer(server.t),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
    })
    const other = Fastify()
    await other.register(linkauthResource, { verifier: introspecting })
    other.get('/links', { config: { scopes: ['links:read'] } }, async () => ({ ok: true }))
    try {
      server.proxy.cut((path) => path === '/api/oauth/introspect')
      const res = await other.inject({ url: '/links', headers: { authorization: `Bearer ${readToken}` } })
      expect(res.statusCode).toBe(503)
      expect(res.headers['retry-after']).toBe('5')
      expect(res.headers['www-authenticate']).toBeUndefined()
      expect(res.json()).toMatchObject({ error: 'temporarily_unavailable' })
      server.proxy.restore()
      const ok = await other.inject({ url: '/links', headers: { authorization: `Bearer ${readToken}` } })
      expect(ok.statusCode).toBe(200)
    } finally {
      server.proxy.restore()
      await other.close()
      await introspecting.close()
    }
  })
})

describe('every 401 names the metadata document (RFC 9728 §5.1)', () => {
  const expired = () => resignedToken(server.t, readToken, { exp: Math.floor(Date.now() / 1000) - 60 })
  const otherApi = () => resignedToken(server.t, readToken, { aud: 'https://commerce.example.com/api' })
  it.each([
    ['missing token', () => undefined, undefined],
    ['another scheme', () => 'Basic dXNlcjpwYXNz', undefined],
    ['a token that is not a JWT', () => 'Bearer not-a-jwt', 'The access token is malformed.'],
    ['a token for another API', () => `Bearer ${otherApi()}`, 'The access token is not meant for this API.'],
    ['an expired token', () => `Bearer ${expired()}`, 'The access token has expired.'],
  ])('%s', async (_case, authorization, description) => {
    const res = await call('/links', { authorization: authorization() })
    expect(res.status).toBe(401)
    expect(res.challenge).toBe(
      description === undefined
        ? `Bearer realm="links", resource_metadata="${metadataUrl}", ${dpopChallenge()}`
        : `Bearer realm="links", resource_metadata="${metadataUrl}", error="invalid_token", error_description="${description}", ${dpopChallenge()}`,
    )
    expect(res.json()).toMatchObject({ error: 'invalid_token' })
  })

  it('and the URL it names serves the document whose resource is the verifier’s, exactly', async () => {
    const res = await fetch(metadataUrl.replace(server.issuer, base))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({
      resource: `${server.issuer}/api`,
      authorization_servers: [server.issuer],
      // Not given as an option: the scopes the routes declare, in the order they appear.
      scopes_supported: ['links:read', 'links:write'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'PS256'],
      dpop_bound_access_tokens_required: false,
    })
    // Only there: the bare well-known path names the origin as a resource (RFC 9728 §3.1), which a
    // client would find is not what the document says (§3.3), so nothing is served at it.
    const bare = await fetch(`${base}/.well-known/oauth-protected-resource`)
    expect(bare.status).toBe(404)
  })
})

describe('the RFC 9728 examples', () => {
  /**
   * An API of the RFC's example host, with this authorization server's tokens signed for it. Bearer
   * tokens only, as in the RFC's examples (no DPoP challenge, no DPoP metadata).
   */
  async function exampleApi(resource: string, options: { resourceName?: string; realm?: string } = {}) {
    const v = await jwksOnlyVerifier(server, { resource, dpop: false })
    const app = Fastify()
    await app.register(linkauthResource, {
      verifier: v,
      scopesSupported: ['profile', 'email', 'phone'],
      ...options,
    })
    app.get('/resource1/items', { config: { scopes: ['profile'] } }, async () => ({ ok: true }))
    return {
      app,
      async close() {
        await app.close()
        await v.close()
      },
    }
  }

  it('§3.2 and §5.1: a resource without a path', async () => {
    const { app, close } = await exampleApi('https://resource.example.com', { resourceName: 'Example API' })
    try {
      const refused = await app.inject({ url: '/resource1/items' })
      expect(refused.statusCode).toBe(401)
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource"',
      )
      const doc = await app.inject({ url: '/.well-known/oauth-protected-resource' })
      expect(doc.statusCode).toBe(200)
      expect(doc.json()).toEqual({
        resource: 'https://resource.example.com',
        authorization_servers: [server.issuer],
        scopes_supported: ['profile', 'email', 'phone'],
        bearer_methods_supported: ['header'],
        resource_name: 'Example API',
      })

      const token = resignedToken(server.t, readToken, {
        aud: 'https://resource.example.com',
        scope: 'profile',
      })
      const ok = await app.inject({ url: '/resource1/items', headers: { authorization: `Bearer ${token}` } })
      expect(ok.statusCode).toBe(200)
    } finally {
      await close()
    }
  })

  it('§3.1: a resource with a path is described at the well-known string inserted before the path', async () => {
    const { app, close } = await exampleApi('https://resource.example.com/resource1', { realm: 'r1' })
    try {
      const refused = await app.inject({
        url: '/resource1/items',
        headers: { authorization: `Bearer ${readToken}` }, // a token of the default audience
      })
      expect(refused.statusCode).toBe(401)
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer realm="r1", resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource/resource1", error="invalid_token", error_description="The access token is not meant for this API."',
      )
      const doc = await app.inject({ url: '/.well-known/oauth-protected-resource/resource1' })
      expect(doc.statusCode).toBe(200)
      expect(doc.json().resource).toBe('https://resource.example.com/resource1')
      // §3.3: each well-known URL serves only the document of the resource it names.
      for (const url of [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-protected-resource/other',
      ])
        expect((await app.inject({ url })).statusCode).toBe(404)
    } finally {
      await close()
    }
  })
})
