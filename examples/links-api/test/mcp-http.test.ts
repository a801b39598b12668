import { beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD } from '../../../test/helpers/browser.js'
import { BrowserAgentProvider } from '../../../test/helpers/mcp-agent.js'
import {
  appToken,
  connectAgent,
  initialize,
  issuer,
  linksBase,
  mcpUrl,
  post,
  preRegistered,
  useMcpServices,
} from './mcp-services.js'

/** The HTTP rules of /mcp's transport for 2025-11-25 clients (initialize, sessions). */
useMcpServices()

describe('HTTP rules of the transport', () => {
  let token: string
  let session: string
  beforeAll(async () => {
    const { registration, email } = await preRegistered()
    const provider = new BrowserAgentProvider(issuer, registration, { email, password: PASSWORD })
    const { client, transport } = await connectAgent(provider)
    await client.close()
    token = provider.tokens()!.access_token
    session = transport.sessionId!
  })
  const list = { jsonrpc: '2.0', id: 5, method: 'tools/list' }

  it('a foreign Origin is refused (DNS rebinding); the API’s own is served', async () => {
    const foreign = await post(list, {
      authorization: `Bearer ${token}`,
      'mcp-session-id': session,
      origin: 'http://evil.example',
    })
    expect(foreign.res.status).toBe(403)
    expect(foreign.json?.error?.code).toBe(-32000)
    const own = await post(list, {
      authorization: `Bearer ${token}`,
      'mcp-session-id': session,
      origin: linksBase,
    })
    expect(own.res.status).toBe(200)
  })

  it('MCP-Protocol-Version: an unsupported one is 400; initialize negotiates 2025-11-25', async () => {
    const bad = await post(list, {
      authorization: `Bearer ${token}`,
      'mcp-session-id': session,
      'mcp-protocol-version': '1999-01-01',
    })
    // A version the 2025 lifecycle does not know is taken for a stateless request of it, and refused so.
    expect(bad.res.status).toBe(400)
    expect(bad.json).toMatchObject({
      id: 5,
      error: { code: -32022, message: /Unsupported protocol version/ },
    })
    const init = await post(initialize, { authorization: `Bearer ${token}` })
    expect(init.res.status).toBe(200)
    expect(init.json?.result?.protocolVersion).toBe('2025-11-25')
    expect(init.res.headers.get('mcp-session-id')).toMatch(/^[\w-]+\.[\w-]+$/)
    // An initialize the server refuses (its params are not an initialize's) opens no session.
    const refused = await post(
      { ...initialize, params: { protocolVersion: 7 } },
      { authorization: `Bearer ${token}` },
    )
    expect(refused.res.status).toBe(200)
    expect(refused.json?.error?.code).toBeTypeOf('number')
    expect(refused.res.headers.get('mcp-session-id')).toBeNull()
  })

  it('no session id is 400; a made-up one is 404; GET and DELETE are 405', async () => {
    expect((await post(list, { authorization: `Bearer ${token}` })).res.status).toBe(400)
    expect(
      (await post(list, { authorization: `Bearer ${token}`, 'mcp-session-id': 'made-up' })).res.status,
    ).toBe(404)
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(mcpUrl, {
        method,
        headers: { authorization: `Bearer ${token}`, 'mcp-session-id': session },
      })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
    }
  })

  it('a body too large, or not JSON, is a JSON-RPC error', async () => {
    const huge = await post(
      { ...list, params: { pad: 'x'.repeat(70 * 1024) } },
      { authorization: `Bearer ${token}`, 'mcp-session-id': session },
    )
    expect(huge.res.status).toBe(413)
    expect(huge.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
    const garbled = await post('{not json', { authorization: `Bearer ${token}`, 'mcp-session-id': session })
    expect(garbled.res.status).toBe(400)
    expect(garbled.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
  })

  it('tools/call: an unknown tool is a JSON-RPC error; arguments of the wrong type a tool error naming them', async () => {
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': session }
    const call = (name: string, args: unknown) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name, arguments: args },
    })
    const unknown = await post(call('drop_everything', {}), headers)
    expect(unknown.res.status).toBe(200)
    expect(unknown.json).toMatchObject({
      id: 7,
      error: { code: -32602, message: expect.stringContaining('drop_everything') },
    })
    type ToolResult = { isError?: boolean; content: { type: string; text: string }[] }
    const wrong = (await post(call('create_link', { target_url: 42, tags: 'x' }), headers)).json
      ?.result as ToolResult
    expect(wrong.isError).toBe(true)
    expect(wrong.content[0]!.text).toMatch(/^invalid_request: /)
    expect(wrong.content[0]!.text).toContain('target_url')
    expect(wrong.content[0]!.text).toContain('tags')
    const missing = (await post(call('get_link', {}), headers)).json?.result as ToolResult
    expect(missing.isError).toBe(true)
    expect(missing.content[0]!.text).toMatch(/^invalid_request: id: /)
  })

  it('Accept must list JSON and event streams (406); a batch is answered in order; notifications alone 202; a malformed message 400', async () => {
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': session }
    const jsonOnly = await post(list, { ...headers, accept: 'application/json' })
    expect(jsonOnly.res.status).toBe(406)
    expect(jsonOnly.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } })
    const batch = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        ...headers,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } },
        { ...list, id: 'a' },
      ]),
    })
    expect(batch.status).toBe(200)
    const answers = (await batch.json()) as { id: string; result: Record<string, unknown> }[]
    expect(answers.map((a) => a.id)).toEqual(['b', 'a'])
    expect(answers[0]!.result).toEqual({})
    expect(answers[1]!.result.tools).toHaveLength(7)
    const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)
    expect(notified.res.status).toBe(202)
    expect(notified.json).toBeUndefined()
    for (const bad of [{ ...list, id: null }, { jsonrpc: '2.0', id: 3 }, [], { ...list, jsonrpc: '1.0' }]) {
      const refused = await post(bad, headers)
      expect(refused.res.status).toBe(400)
      expect(refused.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
    }
  })

  it('two users calling at once with the same request ids each get their own links', async () => {
    const users = await Promise.all(
      [0, 1].map(async (n) => {
        const bearer = (await appToken(mcpUrl.href)).access_token
        const init = await post(initialize, { authorization: `Bearer ${bearer}` })
        const headers = {
          authorization: `Bearer ${bearer}`,
          'mcp-session-id': init.res.headers.get('mcp-session-id')!,
        }
        const made = await post(
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'create_link', arguments: { target_url: `https://user${n}.example/` } },
          },
          headers,
        )
        const link = made.json?.result?.structuredContent as { id: string; target_url: string }
        return { headers, link }
      }),
    )
    const getLink = (id: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_link', arguments: { id } },
    })
    const calls = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const user = users[i % 2]!
        return post(getLink(user.link.id), user.headers)
      }),
    )
    calls.forEach((call, i) =>
      expect(call.json).toMatchObject({
        id: 1,
        result: { structuredContent: { target_url: `https://user${i % 2}.example/` } },
      }),
    )
    // Each user's token reaches only that user's links, whoever else calls at the same moment.
    const [crossed] = await Promise.all([
      post(getLink(users[1]!.link.id), users[0]!.headers),
      post(getLink(users[0]!.link.id), users[1]!.headers),
    ])
    expect(crossed.json?.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/^not_found: /) }],
    })
  })

  it('without a token: 401 naming the endpoint’s metadata document', async () => {
    const res = await post(initialize)
    expect(res.res.status).toBe(401)
    expect(res.res.headers.get('www-authenticate')).toContain(
      `Bearer realm="links-mcp", resource_metadata="${linksBase}/.well-known/oauth-protected-resource/mcp"`,
    )
  })
})
