import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { accessTokenHash } from '@linkauth/resource/dpop'
import { describe, expect, it } from 'vitest'
import { dpopKey, dpopProof } from '../../../test/helpers/dpop.js'
import { hiddenField, PASSWORD } from '../../../test/helpers/browser.js'
import { BrowserAgentProvider } from '../../../test/helpers/mcp-agent.js'
import {
  appToken,
  connectAgent,
  dynamicRegistration,
  expectedClientId,
  initialize,
  issuer,
  linksBase,
  mcpUrl,
  metadataDocument,
  post,
  preRegistered,
  useMcpServices,
} from './mcp-services.js'

/**
 * The links API's MCP endpoint, revision 2025-11-25 (initialize and sessions), with the official SDK
 * client and its OAuth provider: agents of each kind of registration, audiences, step-up, revocation
 * and sessions, DPoP. The transport's HTTP rules: mcp-http.test.ts; revision 2026-07-28:
 * mcp-stateless.test.ts.
 */
useMcpServices()

describe.each([
  { name: 'a client registered by the operator', register: preRegistered },
  { name: 'a client-id metadata document', register: metadataDocument },
  { name: 'dynamic registration (RFC 7591)', register: dynamicRegistration },
])('an agent with $name', ({ register }) => {
  it('from the bare URL to tools/list and tools/call: creates a link and reads its statistics', async () => {
    const { registration, email } = await register()
    const provider = new BrowserAgentProvider(issuer, registration, { email, password: PASSWORD })
    const { client, transport } = await connectAgent(provider)
    try {
      // The user was sent to linkauth for this endpoint's own audience and the scopes it names.
      const authorizeUrl = provider.authorizationUrls[0]!
      expect(authorizeUrl.searchParams.get('resource')).toBe(mcpUrl.href)
      expect(authorizeUrl.searchParams.get('scope')).toBe('links:read links:write')
      expect(authorizeUrl.searchParams.get('client_id')).toBe(await expectedClientId(registration, provider))
      expect(client.getServerVersion()?.name).toBe('linkauth-links-api')

      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'create_link',
        'delete_link',
        'get_link',
        'link_stats',
        'list_links',
        'list_tags',
        'update_link',
      ])
      const create = tools.find((tool) => tool.name === 'create_link')!
      expect(create._meta).toEqual({ 'linkauth/scopes': ['links:write'] })
      expect(create.description).toContain('links:write')
      expect(create.inputSchema.properties).toHaveProperty('target_url')
      expect(create.outputSchema?.properties).toHaveProperty('short_url')
      expect(tools.find((tool) => tool.name === 'link_stats')!._meta).toEqual({
        'linkauth/scopes': ['links:read'],
      })

      const created = await client.callTool({
        name: 'create_link',
        arguments: { target_url: 'https://shop.example/autumn', tags: ['Promo'] },
      })
      expect(created.isError).toBeFalsy()
      const link = created.structuredContent as {
        id: string
        slug: string
        short_url: string
        tags: string[]
      }
      expect(link.short_url).toBe(`${linksBase}/${link.slug}`)
      expect(link.tags).toEqual(['promo'])

      // The agent finds it again by a word of its target URL, any case.
      const found = await client.callTool({ name: 'list_links', arguments: { q: 'AUTUMN' } })
      expect(found.structuredContent).toMatchObject({ links: [{ id: link.id }], next_cursor: null })

      // A visitor follows the short link; the agent reads the statistics.
      const visit = await fetch(link.short_url, { redirect: 'manual' })
      expect(visit.status).toBe(302)
      const today = new Date().toISOString().slice(0, 10)
      const stats = await client.callTool({
        name: 'link_stats',
        arguments: { id: link.id, from: today, to: today },
      })
      expect(stats.structuredContent).toMatchObject({
        link_id: link.id,
        total_clicks: 1,
        clicks_in_range: 1,
        days: [{ date: today, clicks: 1 }],
      })

      // The REST API's rules answer through the tool: a refusal the model can read.
      const bad = await client.callTool({
        name: 'create_link',
        arguments: { target_url: 'ftp://x.example/' },
      })
      expect(bad.isError).toBe(true)
      expect(JSON.stringify(bad.content)).toContain('invalid_request')
      expect(transport.sessionId).toBeTruthy()
    } finally {
      await client.close()
    }
  })
})

describe('audiences', () => {
  it('a token for /mcp is refused by the REST API, and a REST token is refused at /mcp', async () => {
    const { registration, email } = await preRegistered()
    const provider = new BrowserAgentProvider(issuer, registration, { email, password: PASSWORD })
    const { client } = await connectAgent(provider)
    await client.close()
    const mcpToken = provider.tokens()!.access_token
    const atRest = await fetch(`${linksBase}/api/links`, { headers: { authorization: `Bearer ${mcpToken}` } })
    expect(atRest.status).toBe(401)
    expect(atRest.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // A token for the REST API, asked for with its resource identifier.
    const restToken = (await appToken(`${linksBase}/api`)).access_token
    expect(
      (await fetch(`${linksBase}/api/links`, { headers: { authorization: `Bearer ${restToken}` } })).status,
    ).toBe(200)
    const atMcp = await post(initialize, { authorization: `Bearer ${restToken}` })
    expect(atMcp.res.status).toBe(401)
    expect(atMcp.res.headers.get('www-authenticate')).toBe(
      `Bearer realm="links-mcp", resource_metadata="${linksBase}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="The access token is not meant for this API.", DPoP realm="links-mcp", resource_metadata="${linksBase}/.well-known/oauth-protected-resource/mcp", algs="ES256 EdDSA Ed25519 PS256"`,
    )
  })

  it('each well-known URL serves only the document of the resource it names', async () => {
    const mcpDoc = await (await fetch(`${linksBase}/.well-known/oauth-protected-resource/mcp`)).json()
    expect(mcpDoc).toMatchObject({
      resource: mcpUrl.href,
      authorization_servers: [issuer],
      scopes_supported: ['links:read', 'links:write'],
    })
    const apiDoc = await (await fetch(`${linksBase}/.well-known/oauth-protected-resource/api`)).json()
    expect(apiDoc).toMatchObject({ resource: `${linksBase}/api` })
    expect((await fetch(`${linksBase}/.well-known/oauth-protected-resource`)).status).toBe(404)
  })
})

describe('step-up', () => {
  it('a links:read token gets 403 insufficient_scope for create_link; the SDK asks the user for links:write', async () => {
    const { registration, email } = await preRegistered()
    const provider = new BrowserAgentProvider(
      issuer,
      registration,
      { email, password: PASSWORD },
      { keepRefreshToken: false },
    )
    // The host first asks for reading only.
    expect(await auth(provider, { serverUrl: mcpUrl, scope: 'links:read' })).toBe('REDIRECT')
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    expect(provider.tokens()!.scope).toBe('links:read')

    const readToken = `Bearer ${provider.tokens()!.access_token}`
    const init = await post(initialize, { authorization: readToken })
    const raw = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'create_link', arguments: {} } },
      { authorization: readToken, 'mcp-session-id': init.res.headers.get('mcp-session-id')! },
    )
    expect(raw.res.status).toBe(403)
    expect(raw.res.headers.get('www-authenticate')).toMatch(
      new RegExp(
        `^Bearer realm="links-mcp", resource_metadata="${linksBase}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="[^"]+", scope="links:read links:write"`,
      ),
    )

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
    const client = new Client({ name: 'agent', version: '1.0.0' })
    await client.connect(transport)
    try {
      expect((await client.callTool({ name: 'list_links', arguments: {} })).isError).toBeFalsy()
      const call = { name: 'create_link', arguments: { target_url: 'https://shop.example/step-up' } }
      await expect(client.callTool(call)).rejects.toThrow(UnauthorizedError)
      const again = provider.authorizationUrls.at(-1)!
      expect(again.searchParams.get('scope')).toBe('links:read links:write')
      expect(again.searchParams.get('resource')).toBe(mcpUrl.href)
      await transport.finishAuth(provider.takeCode())
      expect(provider.tokens()!.scope).toBe('links:read links:write')
      // Same user, same session: the call goes through with the wider token.
      const created = await client.callTool(call)
      expect(created.isError).toBeFalsy()
      expect(created.structuredContent).toMatchObject({ target_url: 'https://shop.example/step-up' })
      expect((await client.callTool({ name: 'list_links', arguments: {} })).isError).toBeFalsy()
    } finally {
      await client.close()
    }
  })

  it('SDK 1.32 with a refresh token: its step-up refreshes and gives up; the host’s workaround (integrating.md) gets the scope', async () => {
    const { registration, email } = await preRegistered()
    const provider = new BrowserAgentProvider(issuer, registration, { email, password: PASSWORD })
    expect(await auth(provider, { serverUrl: mcpUrl, scope: 'links:read' })).toBe('REDIRECT')
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
      'AUTHORIZED',
    )
    expect(provider.tokens()!.refresh_token).toBeTruthy()
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
    const client = new Client({ name: 'agent', version: '1.0.0' })
    await client.connect(transport)
    try {
      const call = { name: 'create_link', arguments: { target_url: 'https://shop.example/refreshed' } }
      // typescript-sdk#2255: the refresh brings back links:read alone (RFC 6749 §6), the retry the same 403.
      // When the SDK is fixed (SEP-2350), this fails: the workaround below is then no longer needed.
      await expect(client.callTool(call)).rejects.toThrow(/403 after trying upscoping/)
      expect(provider.tokens()!.scope).toBe('links:read')
      // The workaround: forget the tokens, authorize again with the challenge's scope.
      provider.invalidateCredentials('tokens')
      expect(await auth(provider, { serverUrl: mcpUrl, scope: 'links:read links:write' })).toBe('REDIRECT')
      expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: provider.takeCode() })).toBe(
        'AUTHORIZED',
      )
      expect(provider.tokens()!.scope).toBe('links:read links:write')
      const created = await client.callTool(call)
      expect(created.structuredContent).toMatchObject({ target_url: 'https://shop.example/refreshed' })
    } finally {
      await client.close()
    }
  })
})

describe('revocation and sessions', () => {
  it('revoking the agent on /account/apps stops its next call within a second', async () => {
    const { registration, email } = await preRegistered()
    const provider = new BrowserAgentProvider(issuer, registration, { email, password: PASSWORD })
    const { client } = await connectAgent(provider)
    try {
      expect((await client.callTool({ name: 'list_tags', arguments: {} })).structuredContent).toEqual({
        tags: [],
      })
      const apps = await provider.browser.request('/account/apps')
      const revoked = await provider.browser.request(`/account/apps/${registration.clientId}/revoke`, {
        method: 'POST',
        form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
      })
      expect(revoked.res.status).toBe(303)
      const revokedAt = performance.now()
      const token = provider.tokens()!.access_token
      let refusedAfterMs = Infinity
      while (performance.now() - revokedAt < 2000) {
        const res = await post(
          { jsonrpc: '2.0', id: 3, method: 'tools/list' },
          { authorization: `Bearer ${token}`, 'mcp-session-id': 'unchecked-before-the-token' },
        )
        if (res.res.status === 401) {
          refusedAfterMs = performance.now() - revokedAt
          expect(res.res.headers.get('www-authenticate')).toContain('error="invalid_token"')
          break
        }
        await new Promise((r) => setTimeout(r, 10))
      }
      expect(refusedAfterMs).toBeLessThan(1000)
      // The SDK client's next call: refused, the refresh token is revoked too, so the user is asked again.
      const before = provider.authorizationUrls.length
      await expect(client.callTool({ name: 'list_tags', arguments: {} })).rejects.toThrow(UnauthorizedError)
      expect(provider.authorizationUrls.length).toBe(before + 1)
    } finally {
      await client.close()
    }
  })

  it('another user’s token cannot use a session', async () => {
    const alice = await preRegistered()
    const aliceAgent = new BrowserAgentProvider(issuer, alice.registration, {
      email: alice.email,
      password: PASSWORD,
    })
    const { client, transport } = await connectAgent(aliceAgent)
    await client.close()
    const bob = await preRegistered()
    const bobAgent = new BrowserAgentProvider(issuer, bob.registration, {
      email: bob.email,
      password: PASSWORD,
    })
    const bobs = await connectAgent(bobAgent)
    await bobs.client.close()
    const list = { jsonrpc: '2.0', id: 4, method: 'tools/list' }
    const as = (agent: BrowserAgentProvider, session: string) =>
      post(list, {
        authorization: `Bearer ${agent.tokens()!.access_token}`,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-11-25',
      })
    expect((await as(aliceAgent, transport.sessionId!)).res.status).toBe(200)
    const hijack = await as(bobAgent, transport.sessionId!)
    expect(hijack.res.status).toBe(404)
    expect(hijack.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32001, message: 'Session not found' },
    })
    expect((await as(bobAgent, bobs.transport.sessionId!)).res.status).toBe(200)
  })
})

describe('DPoP', () => {
  it('a DPoP-bound token for /mcp works with its proof, and not as a Bearer token', async () => {
    const key = await dpopKey()
    const body = await appToken(mcpUrl.href, await dpopProof(key, { issuer, now: new Date() }))
    expect(body.token_type).toBe('DPoP')
    const bound = body.access_token
    const proof = () =>
      dpopProof(key, {
        issuer,
        now: new Date(),
        claims: { htm: 'POST', htu: mcpUrl.href, ath: accessTokenHash(bound) },
      })
    const init = await post(initialize, { authorization: `DPoP ${bound}`, dpop: await proof() })
    expect(init.res.status).toBe(200)
    const session = init.res.headers.get('mcp-session-id')!
    const created = await post(
      {
        jsonrpc: '2.0',
        id: 6,
        method: 'tools/call',
        params: { name: 'create_link', arguments: { target_url: 'https://shop.example/dpop' } },
      },
      { authorization: `DPoP ${bound}`, dpop: await proof(), 'mcp-session-id': session },
    )
    expect(created.res.status).toBe(200)
    expect(created.json?.result).toMatchObject({
      structuredContent: { target_url: 'https://shop.example/dpop' },
    })
    const asBearer = await post(initialize, { authorization: `Bearer ${bound}` })
    expect(asBearer.res.status).toBe(401)
    expect(asBearer.json).toMatchObject({ error: 'invalid_token' })
  })
})
