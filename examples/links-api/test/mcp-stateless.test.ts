import { accessTokenHash } from '@linkauth/resource/dpop'
import { beforeAll, describe, expect, it } from 'vitest'
import { hiddenField } from '../../../test/helpers/browser.js'
import { dpopKey, dpopProof } from '../../../test/helpers/dpop.js'
import { appToken, initialize, issuer, linksBase, mcpUrl, post, useMcpServices } from './mcp-services.js'

/**
 * /mcp for clients of MCP 2026-07-28 (stateless: no initialize, no session; every request carries its
 * version and the client's capabilities in `_meta`, and the MCP-Protocol-Version, Mcp-Method and
 * Mcp-Name headers), on the same URL as 2025-11-25 clients, which keep their initialize and sessions.
 */
useMcpServices()

const REVISION = '2026-07-28'
const meta = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1.0.0' },
}

/** A 2026-07-28 request as a client of the revision sends it: `_meta` in the body, the headers. */
function request(method: string, params: Record<string, unknown> = {}, id: string | number = 1) {
  const headers: Record<string, string> = { 'mcp-protocol-version': REVISION, 'mcp-method': method }
  if (typeof params.name === 'string') headers['mcp-name'] = params.name
  return { body: { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }, headers }
}

let bearer: string
const auth = () => ({ authorization: `Bearer ${bearer}` })
/** Sends a 2026-07-28 request, `change` altering the headers it would have. */
async function send(req: ReturnType<typeof request>, change: Record<string, string | undefined> = {}) {
  const headers: Record<string, string> = { ...auth() }
  for (const [name, value] of Object.entries({ ...req.headers, ...change }))
    if (value !== undefined) headers[name] = value
  return post(req.body, headers)
}

beforeAll(async () => {
  bearer = (await appToken(mcpUrl.href)).access_token
})

describe('MCP 2026-07-28 on /mcp', () => {
  it('server/discover: the revision, the tools capability, the server in _meta, caching hints; no session', async () => {
    const { res, json } = await send(request('server/discover', {}, 'd1'))
    expect(res.status).toBe(200)
    expect(res.headers.get('mcp-session-id')).toBeNull()
    expect(json).toEqual({
      jsonrpc: '2.0',
      id: 'd1',
      result: {
        resultType: 'complete',
        supportedVersions: [REVISION],
        capabilities: { tools: {} },
        instructions: expect.stringContaining('links:write'),
        ttlMs: expect.any(Number),
        cacheScope: 'public',
        _meta: {
          'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'linkauth-links-api' }),
        },
      },
    })
  })

  it('tools/list and tools/call without initialize or session: a link created, then read', async () => {
    const list = await send(request('tools/list'))
    expect(list.res.status).toBe(200)
    expect(list.json?.result).toMatchObject({ resultType: 'complete', cacheScope: 'public' })
    expect((list.json?.result?.tools as unknown[]).length).toBe(7)
    const created = await send(
      request(
        'tools/call',
        { name: 'create_link', arguments: { target_url: 'https://shop.example/2026' } },
        2,
      ),
    )
    expect(created.res.status).toBe(200)
    const result = created.json?.result as { resultType: string; structuredContent: { id: string } }
    expect(result).toMatchObject({
      resultType: 'complete',
      structuredContent: { target_url: 'https://shop.example/2026' },
    })
    const read = await send(
      request('tools/call', { name: 'get_link', arguments: { id: result.structuredContent.id } }, 3),
    )
    expect(read.json).toMatchObject({
      id: 3,
      result: { structuredContent: { target_url: 'https://shop.example/2026' } },
    })
  })

  it('methods the revision removed, and unknown ones, are 404 -32601 under the request’s id', async () => {
    for (const [i, method] of [
      'initialize',
      'ping',
      'logging/setLevel',
      'resources/subscribe',
      'no/such',
    ].entries()) {
      const { res, json } = await send(request(method, {}, 10 + i))
      expect(res.status, method).toBe(404)
      expect(json, method).toMatchObject({ jsonrpc: '2.0', id: 10 + i, error: { code: -32601 } })
    }
  })

  it('a request’s _meta, version and headers are checked: 400 with -32602, -32022 or -32020, under its id', async () => {
    const discover = request('server/discover', {}, 7)
    const cases: [string, Awaited<ReturnType<typeof post>>, number][] = [
      ['no _meta', await post({ ...discover.body, params: {} }, { ...auth(), ...discover.headers }), -32602],
      [
        'no clientCapabilities',
        await post(
          { ...discover.body, params: { _meta: { 'io.modelcontextprotocol/protocolVersion': REVISION } } },
          { ...auth(), ...discover.headers },
        ),
        -32602,
      ],
      [
        'the header names another version',
        await send(discover, { 'mcp-protocol-version': '2099-01-01' }),
        -32022,
      ],
      [
        'the body names another version',
        await post(
          {
            ...discover.body,
            params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
          },
          { ...auth(), ...discover.headers },
        ),
        -32020,
      ],
      ['no MCP-Protocol-Version', await send(discover, { 'mcp-protocol-version': undefined }), -32020],
      ['no Mcp-Method', await send(discover, { 'mcp-method': undefined }), -32020],
      ['another Mcp-Method', await send(discover, { 'mcp-method': 'tools/list' }), -32020],
    ]
    for (const [what, { res, json }, code] of cases) {
      expect(res.status, what).toBe(400)
      expect(json, what).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code } })
    }
    expect(cases[2]![1].json).toMatchObject({
      error: { data: { supported: [REVISION], requested: '2099-01-01' } },
    })
    const call = request('tools/call', { name: 'list_tags', arguments: {} }, 8)
    for (const name of [undefined, 'create_link']) {
      const { res, json } = await send(call, { 'mcp-name': name })
      expect(res.status).toBe(400)
      expect(json).toMatchObject({ id: 8, error: { code: -32020 } })
    }
    // White space around a header's value is not part of it (RFC 9110 §5.5).
    expect((await send(call, { 'mcp-name': '  list_tags ' })).json?.result).toMatchObject({
      resultType: 'complete',
    })
  })

  it('a 2025-11-25 client on the same URL keeps initialize and its session', async () => {
    const init = await post(initialize, auth())
    expect(init.res.status).toBe(200)
    expect(init.json?.result?.protocolVersion).toBe('2025-11-25')
    const session = init.res.headers.get('mcp-session-id')!
    const list = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { ...auth(), 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    )
    expect(list.res.status).toBe(200)
    expect(list.json?.result).not.toHaveProperty('resultType')
    // Without a session and without the revision's _meta, it is still the 2025 lifecycle.
    expect((await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, auth())).res.status).toBe(400)
  })

  it('tools/call needs the tool’s scope: 403 insufficient_scope naming it (step-up); reading works', async () => {
    const reader = (await appToken(mcpUrl.href, undefined, 'links:read')).access_token
    const headers = (req: ReturnType<typeof request>) => ({
      ...req.headers,
      authorization: `Bearer ${reader}`,
    })
    const write = request('tools/call', {
      name: 'create_link',
      arguments: { target_url: 'https://x.example/' },
    })
    const refused = await post(write.body, headers(write))
    expect(refused.res.status).toBe(403)
    expect(refused.res.headers.get('www-authenticate')).toMatch(
      new RegExp(
        `^Bearer realm="links-mcp", resource_metadata="${linksBase}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="[^"]+", scope="links:read links:write"`,
      ),
    )
    const tags = request('tools/call', { name: 'list_tags', arguments: {} })
    expect((await post(tags.body, headers(tags))).json?.result).toMatchObject({
      structuredContent: { tags: [] },
    })
  })

  it('revoking the app on /account/apps stops its next stateless call within a second', async () => {
    const app = await appToken(mcpUrl.href)
    const tags = request('tools/call', { name: 'list_tags', arguments: {} })
    const call = () => post(tags.body, { ...tags.headers, authorization: `Bearer ${app.access_token}` })
    expect((await call()).res.status).toBe(200)
    const apps = await app.browser.request('/account/apps')
    const revoked = await app.browser.request(`/account/apps/${app.clientId}/revoke`, {
      method: 'POST',
      form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
    })
    expect(revoked.res.status).toBe(303)
    const revokedAt = performance.now()
    let refused: Awaited<ReturnType<typeof call>> | undefined
    let refusedAfterMs = Infinity
    while (!refused && performance.now() - revokedAt < 2000) {
      const res = await call()
      if (res.res.status === 401) {
        refused = res
        refusedAfterMs = performance.now() - revokedAt
      } else await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(refusedAfterMs).toBeLessThan(1000)
    expect(refused?.res.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('a DPoP-bound token works with a proof on each stateless call, and not as a Bearer token', async () => {
    const key = await dpopKey()
    const body = await appToken(mcpUrl.href, await dpopProof(key, { issuer, now: new Date() }))
    expect(body.token_type).toBe('DPoP')
    const bound = body.access_token
    const proof = async () =>
      dpopProof(key, {
        issuer,
        now: new Date(),
        claims: { htm: 'POST', htu: mcpUrl.href, ath: accessTokenHash(bound) },
      })
    const create = request('tools/call', {
      name: 'create_link',
      arguments: { target_url: 'https://shop.example/dpop26' },
    })
    const created = await send(create, { authorization: `DPoP ${bound}`, dpop: await proof() })
    expect(created.res.status).toBe(200)
    expect(created.json).toMatchObject({
      result: { structuredContent: { target_url: 'https://shop.example/dpop26' } },
    })
    const noProof = await send(create, { authorization: `DPoP ${bound}` })
    expect(noProof.res.status).toBe(401)
    const asBearer = await send(request('tools/list'), { authorization: `Bearer ${bound}` })
    expect(asBearer.res.status).toBe(401)
    expect(asBearer.json).toMatchObject({ error: 'invalid_token' })
  })
})
