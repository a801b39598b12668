import { randomBytes } from 'node:crypto'
import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTracing } from '../../../src/tracing/start.js'

/**
 * One trace across an agent's tool call, the links API and linkauth (issue 41, part 3), with the
 * OpenTelemetry SDK in this process (vitest runs each file in its own process: the patched modules do
 * not leak into other files) and an in-memory exporter. Tracing starts before anything imports
 * fastify or pg, as the entry points do, so every module below is imported after it.
 */
const exporter = new InMemorySpanExporter()
const tracing = (await startTracing({}, { serviceName: 'tracing-test', exporter }))!
const services = await import('./mcp-services.js')
const { CHALLENGE, PASSWORD, VERIFIER } = await import('../../../test/helpers/browser.js')
const { AGENT_REDIRECT_URI } = await import('../../../test/helpers/mcp-agent.js')
const { testEngine } = await import('../../../test/helpers/database.js')
/** Statement spans come from pg: on the newcomer's embedded PGlite there are none. */
const onPostgres = testEngine() === 'postgres'
services.useMcpServices({ verification: 'introspection' })
afterAll(() => tracing.shutdown())

const REVISION = '2026-07-28'
const hex = (bytes: number) => randomBytes(bytes).toString('hex')

let token: Awaited<ReturnType<typeof services.appToken>>
beforeAll(async () => {
  token = await services.appToken(services.mcpUrl.href)
})

const spans = () => exporter.getFinishedSpans()
const byId = (id: string | undefined) => spans().find((s) => s.spanContext().spanId === id)
const parentOf = (span: ReadableSpan) => byId(span.parentSpanContext?.spanId)
const under = (span: ReadableSpan, root: ReadableSpan): boolean =>
  span === root || (parentOf(span) !== undefined && under(parentOf(span)!, root))

describe('tracing', () => {
  it('one trace from an MCP tools/call (_meta.traceparent) through the links API to linkauth and its database', async () => {
    const traceId = hex(16)
    const agentToolSpan = hex(8) // the agent's span of the tool call, named in _meta
    // The agent, instrumented as this process is: its fetch's span (a child of the tool call's) goes
    // in the traceparent header.
    const agent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId,
      spanId: agentToolSpan,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    })
    const { res, json } = await context.with(agent, () =>
      services.post(
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: {
            name: 'create_link',
            arguments: { target_url: 'https://shop.example/traced' },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': REVISION,
              'io.modelcontextprotocol/clientCapabilities': {},
              traceparent: `00-${traceId}-${agentToolSpan}-01`,
            },
          },
        },
        {
          authorization: `Bearer ${token.access_token}`,
          'mcp-protocol-version': REVISION,
          'mcp-method': 'tools/call',
          'mcp-name': 'create_link',
        },
      ),
    )
    expect(res.status).toBe(200)
    expect(json?.result).toMatchObject({ structuredContent: { target_url: 'https://shop.example/traced' } })

    const inTrace = spans().filter((s) => s.spanContext().traceId === traceId)
    const named = (name: string) => inTrace.filter((s) => s.name === name)
    // The links API's request span, under the agent's HTTP span (the header), under its tool call.
    const [linksRequest] = named('POST /mcp')
    const agentFetch = parentOf(linksRequest!)
    expect(agentFetch?.attributes['url.path']).toBe('/mcp')
    expect(agentFetch?.parentSpanContext?.spanId).toBe(agentToolSpan)
    // Its token check: a fetch to linkauth's introspection endpoint, with the traceparent passed on...
    const fetch = inTrace.find(
      (s) => s.attributes['url.path'] === '/api/oauth/introspect' && s.name === 'POST',
    )
    expect(fetch && parentOf(fetch)).toBe(linksRequest)
    // ...which linkauth's request span continues, and under it linkauth's database statements.
    const [introspect] = named('POST /api/oauth/introspect')
    expect(introspect?.parentSpanContext?.spanId).toBe(fetch?.spanContext().spanId)
    const statements = inTrace.filter((s) => typeof s.attributes['db.query.text'] === 'string')
    if (onPostgres) expect(statements.some((s) => under(s, introspect!))).toBe(true)
    // The tool call, under the agent's tool span (_meta), and the links database's statements under it.
    const [toolCall] = named('tools/call create_link')
    expect(toolCall?.parentSpanContext?.spanId).toBe(agentToolSpan)
    expect(toolCall?.attributes).toMatchObject({ 'gen_ai.tool.name': 'create_link' })
    const inserts = statements.filter((s) => /insert/i.test(String(s.attributes['db.query.text'])))
    if (onPostgres) expect(inserts.some((s) => under(s, toolCall!))).toBe(true)
  })

  it('the token request span says the grant type, the client’s standing and the outcome', () => {
    const exchange = spans().find(
      (s) =>
        s.name === 'POST /api/oauth/token' && s.attributes['linkauth.grant_type'] === 'authorization_code',
    )
    expect(exchange?.attributes).toMatchObject({
      'linkauth.client.standing': 'verified',
      'linkauth.outcome': 'success',
      'http.response.status_code': 200,
    })
    const authorize = spans().filter((s) => s.name.endsWith(' /oauth/authorize'))
    expect(authorize.length).toBeGreaterThan(0)
    for (const span of authorize) expect(span.attributes['url.path']).toBe('/oauth/authorize')
    expect(authorize.some((s) => s.attributes['linkauth.outcome'] === 'success')).toBe(true)
  })

  it('a Client ID Metadata Document fetch is a client span inside the authorization request', async () => {
    const { registration } = await services.metadataDocument()
    const url = (registration as { url: string }).url
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: url,
      redirect_uri: AGENT_REDIRECT_URI,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      state: 'xyz-state',
    })
    await fetch(`${services.issuer}/oauth/authorize?${query}`, { redirect: 'manual' })
    const documentFetch = spans().find((s) => s.attributes['url.full'] === url)
    const authorize = spans().find(
      (s) =>
        s.name === 'GET /oauth/authorize' && s.spanContext().traceId === documentFetch?.spanContext().traceId,
    )
    expect(documentFetch && authorize && under(documentFetch, authorize)).toBe(true)
    expect(authorize?.attributes['linkauth.client.standing']).toBe('vouched')
  })

  it('no span holds a secret: tokens, the code, its verifier, the password, the cookies, the API’s secret', async () => {
    // A refused exchange and an error page too: their spans must not quote what was sent either.
    const bogus = `bogus-code-${hex(16)}`
    const refused = await fetch(`${services.issuer}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: bogus, client_id: token.clientId }),
    })
    expect(refused.status).toBe(400)
    const userCode = `WDJB-${hex(2).toUpperCase()}`
    await fetch(`${services.issuer}/device?user_code=${userCode}`)
    const cookies = token.browser
      .cookieHeader()
      .split(/;\s*/)
      .map((pair) => pair.slice(pair.indexOf('=') + 1))
      .filter((value) => value.length >= 8)
    expect(cookies.length).toBeGreaterThan(0)
    const secrets = {
      access_token: token.access_token,
      refresh_token: token.refresh_token,
      code: token.code,
      code_verifier: VERIFIER,
      password: PASSWORD,
      resource_server_secret: services.mcpCredentials.secret,
      state: 'xyz-state',
      bogus_code: bogus,
      user_code: userCode,
      ...Object.fromEntries(cookies.map((value, i) => [`cookie_${i}`, value])),
    }
    const everything = spans().map((s) =>
      JSON.stringify({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        links: s.links,
        resource: s.resource.attributes,
      }),
    )
    expect(everything.length).toBeGreaterThan(20)
    const found = Object.entries(secrets).flatMap(([what, value]) =>
      everything.filter((text) => text.includes(value)).map((text) => `${what} in ${text.slice(0, 200)}`),
    )
    expect(found).toEqual([])
  })
})
