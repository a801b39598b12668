import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { readMessages } from '../src/mcp/json-rpc.js'
import { PostTransport } from '../src/mcp/post-transport.js'

/**
 * The POST transport with the SDK's real Server: many clients' requests through one server, each
 * answered under its own id, to its own POST.
 */
const call = (id: string | number, name: string, args: Record<string, unknown> = {}): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})
const as = (sub: string) => ({ authInfo: { token: 't', clientId: 'c', scopes: [], extra: { sub } } })

let server: Server | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A server whose one tool answers, after `ms` milliseconds, who called it and with what. */
async function echoServer() {
  const transport = new PostTransport()
  server = new Server({ name: 'echo', version: '1' }, { capabilities: { tools: {} } })
  const started: string[] = []
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments as { ms: number; tag: string }
    started.push(args.tag)
    await extra.sendNotification({
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 1 },
    })
    await new Promise((resolve) => setTimeout(resolve, args.ms))
    if (extra.signal.aborted) throw new Error('aborted')
    const text = `${String(extra.authInfo?.extra?.sub)}:${args.tag}`
    return { content: [{ type: 'text', text }] }
  })
  await server.connect(transport)
  return { transport, started }
}

const textOf = (answer: unknown) =>
  (answer as { result: { content: { text: string }[] } }).result.content[0]!.text

describe('PostTransport', () => {
  it('requests of different clients with the same id each get their own answer, under their own id', async () => {
    const { transport } = await echoServer()
    // Alice's slow call and Bob's quick one share id 1; a batch of two with ids 1 and "x".
    const alice = transport.exchange([call(1, 'echo', { ms: 40, tag: 'slow' })], [], as('alice'))
    const bob = transport.exchange([call(1, 'echo', { ms: 1, tag: 'quick' })], [], as('bob'))
    const batch = transport.exchange(
      [call(1, 'echo', { ms: 20, tag: 'a' }), call('x', 'echo', { ms: 1, tag: 'b' })],
      [],
      as('carol'),
    )
    const [a, b, c] = await Promise.all([alice, bob, batch])
    expect(a.map((m) => [m.id, textOf(m)])).toEqual([[1, 'alice:slow']])
    expect(b.map((m) => [m.id, textOf(m)])).toEqual([[1, 'bob:quick']])
    expect(c.map((m) => [m.id, textOf(m)])).toEqual([
      [1, 'carol:a'],
      ['x', 'carol:b'],
    ])
  })

  it('a client’s cancellation reaches no request, not even one whose id the transport gave the same number', async () => {
    const { transport, started } = await echoServer()
    // A ping takes the transport's number 0 (the SDK ignores a cancellation of id 0), Alice's call 1.
    await transport.exchange([{ jsonrpc: '2.0', id: 1, method: 'ping' }], [], as('alice'))
    const pending = transport.exchange([call(1, 'echo', { ms: 30, tag: 'kept' })], [], as('alice'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(started).toEqual(['kept'])
    // Bob names id 1, which is also the number the transport gave Alice's request inside the server.
    await transport.exchange(
      [],
      [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }],
      as('bob'),
    )
    expect(textOf((await pending)[0])).toBe('alice:kept')
  })

  it('an unknown method is the server’s JSON-RPC error under the client’s id', async () => {
    const { transport } = await echoServer()
    const [answer] = await transport.exchange(
      [{ jsonrpc: '2.0', id: 'q', method: 'resources/list' }],
      [],
      as('alice'),
    )
    expect(answer).toEqual({ jsonrpc: '2.0', id: 'q', error: { code: -32601, message: 'Method not found' } })
  })

  it('closing answers what is still waiting with an error, and takes nothing more', async () => {
    const { transport } = await echoServer()
    const pending = transport.exchange([call(9, 'echo', { ms: 50, tag: 'late' })], [], as('alice'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    await server!.close()
    expect(await pending).toEqual([
      { jsonrpc: '2.0', id: 9, error: { code: -32000, message: 'The server is shutting down' } },
    ])
    await expect(transport.exchange([call(10, 'echo', { ms: 1, tag: 'x' })], [], as('a'))).rejects.toThrow(
      /closed/,
    )
  })
})

describe('readMessages', () => {
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  const notification = { jsonrpc: '2.0', method: 'notifications/initialized' }
  const initialize = { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }

  it('tells requests, notifications and responses apart, in one message or a batch', () => {
    expect(readMessages(request)).toMatchObject({ ok: true, batch: false, requests: [request] })
    expect(
      readMessages([request, notification, { jsonrpc: '2.0', id: 4, result: {} }, { ...request, id: 'b' }]),
    ).toMatchObject({
      ok: true,
      batch: true,
      requests: [request, { ...request, id: 'b' }],
      notifications: [notification],
      initializing: false,
    })
    expect(readMessages(initialize)).toMatchObject({ ok: true, initializing: true })
  })

  it.each([
    ['not an object', 'tools/list'],
    ['null', null],
    ['no jsonrpc member', { id: 1, method: 'tools/list' }],
    ['JSON-RPC 1.0', { ...request, jsonrpc: '1.0' }],
    ['an id of null', { ...request, id: null }],
    ['a fractional id', { ...request, id: 1.5 }],
    ['params not an object', { ...request, params: [1] }],
    ['a member JSON-RPC does not have', { ...request, extra: true }],
    ['neither method nor result', { jsonrpc: '2.0', id: 1 }],
    ['an empty batch', []],
    ['a batch over 100', Array.from({ length: 101 }, (_, i) => ({ ...request, id: i }))],
    ['initialize with another message', [initialize, notification]],
    ['a bad message inside a batch', [request, { jsonrpc: '2.0' }]],
  ])('refuses %s', (_, body) => {
    expect(readMessages(body)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Invalid Request: /),
    })
  })
})
