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

  it('no token: 401 with a bare challenge and the realm', async () => {
    const res = await call('/links')
    expect(res.status).toBe(401)
    expect(res.challenge).toBe('Bearer realm="links"')
    expect(res.json()).toMatchObject({ error: 'invalid_token' })
  })

  it('a malformed header: 400 invalid_request', async () => {
    const res = await call('/links', { authorization: 'Bearer' })
    expect(res.status).toBe(400)
    expect(res.challenge).toMatch(
      /^Bearer realm="links", error="invalid_request", error_description="[^"]+"$/,
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
      'Bearer realm="links", error="invalid_token", error_description="The access token is not meant for this API."',
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
      'Bearer realm="links", error="insufficient_scope", error_description="The access token does not grant every scope this request needs.", scope="links:write"',
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
      audience: server.t.config.accessTokenAudience,
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
