import {
  InsufficientScopeError,
  InvalidTokenError,
  mcpTokenVerifier,
  protectedEndpoint,
  type ResourceVerifier,
} from '@linkauth/resource'
import {
  InsufficientScopeError as SdkInsufficientScopeError,
  InvalidTokenError as SdkInvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParty } from '../helpers/fixtures.js'
import {
  accessToken,
  jwksOnlyVerifier,
  type ListeningAuthServer,
  resignedToken,
  startAuthServer,
} from '../helpers/resource.js'

/** The toolkit's pieces for an endpoint with its own resource identifier (an MCP server). */
let server: ListeningAuthServer
let verifier: ResourceVerifier
let readToken: string
let readerId: string

beforeAll(async () => {
  server = await startAuthServer()
  verifier = await jwksOnlyVerifier(server)
  const reader = await createParty(server.t, { grantScopes: ['links:read'] })
  readerId = reader.userId
  readToken = resignedToken(server.t, await accessToken(server.t, reader), { aud: `${server.issuer}/mcp` })
})
afterAll(async () => {
  await verifier?.close()
  await server?.close()
})

describe('protectedEndpoint', () => {
  it('describes the endpoint at the URL its identifier derives, with the scopes it serves', async () => {
    const v = await jwksOnlyVerifier(server, { resource: `${server.issuer}/mcp` })
    try {
      const endpoint = protectedEndpoint({ verifier: v, scopesSupported: ['links:read', 'links:write'] })
      expect(endpoint.metadataUrl).toBe(`${server.issuer}/.well-known/oauth-protected-resource/mcp`)
      expect(endpoint.metadataPath).toBe('/.well-known/oauth-protected-resource/mcp')
      expect(endpoint.metadata).toMatchObject({
        resource: `${server.issuer}/mcp`,
        authorization_servers: [server.issuer],
        scopes_supported: ['links:read', 'links:write'],
      })

      const claims = await endpoint.authenticate(
        { authorization: `Bearer ${readToken}`, method: 'POST', path: '/mcp' },
        ['links:read'],
      )
      expect(claims.sub).toBe(readerId)
      // Step-up: the challenge names what the token has and what is missing.
      const refused = await endpoint
        .authenticate({ authorization: `Bearer ${readToken}`, method: 'POST', path: '/mcp' }, ['links:write'])
        .catch((err: unknown) => err)
      expect(refused).toBeInstanceOf(InsufficientScopeError)
      const refusal = endpoint.refusal(refused as InsufficientScopeError)
      expect(refusal.status).toBe(403)
      expect(refusal.headers['www-authenticate']).toEqual([
        `Bearer resource_metadata="${endpoint.metadataUrl}", error="insufficient_scope", error_description="The access token does not grant every scope this request needs.", scope="links:read links:write"`,
        `DPoP resource_metadata="${endpoint.metadataUrl}", algs="ES256 EdDSA Ed25519 PS256"`,
      ])
      expect(refusal.headers['cache-control']).toBe('no-store')
    } finally {
      await v.close()
    }
  })

  it('refuses a token of another audience with a challenge naming its document', async () => {
    const endpoint = protectedEndpoint({ verifier, realm: 'api' })
    const err = await endpoint
      .authenticate({ authorization: `Bearer ${readToken}`, method: 'POST', path: '/api' })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidTokenError)
    expect((err as InvalidTokenError).code).toBe('wrong_audience')
    expect(endpoint.refusal(err as InvalidTokenError).headers['www-authenticate']![0]).toContain(
      `Bearer realm="api", resource_metadata="${server.issuer}/.well-known/oauth-protected-resource/api", error="invalid_token"`,
    )
  })
})

describe('mcpTokenVerifier', () => {
  it('answers the SDK’s AuthInfo, and refuses with the SDK’s own error classes', async () => {
    const v = await jwksOnlyVerifier(server, { resource: `${server.issuer}/mcp` })
    try {
      const info = await mcpTokenVerifier(v).verifyAccessToken(readToken)
      expect(info).toMatchObject({
        token: readToken,
        scopes: ['links:read'],
        resource: new URL(`${server.issuer}/mcp`),
        extra: { sub: readerId },
      })
      expect(info.expiresAt).toBeGreaterThan(Date.now() / 1000)
      // A token for another audience: the SDK's InvalidTokenError, which its middleware answers 401.
      const other = await mcpTokenVerifier(verifier)
        .verifyAccessToken(readToken)
        .catch((e: unknown) => e)
      expect(other).toBeInstanceOf(SdkInvalidTokenError)
      expect(other).not.toBeInstanceOf(SdkInsufficientScopeError)
    } finally {
      await v.close()
    }
  })
})
