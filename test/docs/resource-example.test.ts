import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApi } from '../../docs/examples/protected-api.js'
import { createParty } from '../helpers/fixtures.js'
import { accessToken, startAuthServer, waitFor, type ListeningAuthServer } from '../helpers/resource.js'
import { createResourceServer, revokeRequest } from '../helpers/tokens.js'

/** docs/examples/protected-api.ts: included verbatim in docs/integrating.md, and run here for real. */

let server: ListeningAuthServer
let api: FastifyInstance
let base: string

beforeAll(async () => {
  server = await startAuthServer()
  const rs = await createResourceServer(server.t)
  api = await buildApi({
    issuer: server.issuer,
    resource: server.t.config.accessTokenAudience,
    resourceServerId: rs.id,
    resourceServerSecret: rs.secret,
  })
  base = await api.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await api.close()
  await server.close()
})

const call = (path: string, token?: string, method = 'GET') =>
  fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    body: method === 'POST' ? '{"url":"https://example.com"}' : undefined,
  })

it('docs/integrating.md includes the example verbatim', () => {
  const doc = readFileSync('docs/integrating.md', 'utf8')
  expect(doc).toContain('```ts\n' + readFileSync('docs/examples/protected-api.ts', 'utf8') + '```\n')
})

it('protects its routes: scopes, 401/403 answers, and a revocation seen at once', async () => {
  const reader = await createParty(server.t, { grantScopes: ['links:read'] })
  const token = await accessToken(server.t, reader)

  expect(await (await call('/healthz')).json()).toEqual({ status: 'ok', verifier: 'local' })
  const list = await call('/links', token)
  expect(list.status).toBe(200)
  expect(await list.json()).toEqual({ owner: reader.userId, links: [] })

  const create = await call('/links', token, 'POST')
  expect(create.status).toBe(403)
  expect(create.headers.get('www-authenticate')).toContain('scope="links:write"')
  const writer = await createParty(server.t, { grantScopes: ['links:read', 'links:write'] })
  expect((await call('/links', await accessToken(server.t, writer), 'POST')).status).toBe(201)

  const anonymous = await call('/links')
  expect(anonymous.status).toBe(401)
  const metadataUrl = `${server.issuer}/.well-known/oauth-protected-resource/api`
  expect(anonymous.headers.get('www-authenticate')).toBe(
    `Bearer realm="links", resource_metadata="${metadataUrl}", DPoP realm="links", resource_metadata="${metadataUrl}", algs="ES256 EdDSA Ed25519 PS256"`,
  )
  const metadata = await call(new URL(metadataUrl).pathname)
  expect(await metadata.json()).toEqual({
    resource: server.t.config.accessTokenAudience,
    authorization_servers: [server.issuer],
    scopes_supported: ['links:read', 'links:write'],
    bearer_methods_supported: ['header'],
    resource_name: 'Links API',
    dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'PS256'],
    dpop_bound_access_tokens_required: false,
  })

  await revokeRequest(server.t, { token, client_id: reader.client.id })
  const refused = await waitFor(async () => {
    const res = await call('/links', token)
    return res.status === 401 && res
  })
  expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
})
