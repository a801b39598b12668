import autocannon from 'autocannon'
import { admin, type BenchParty, prepareParty } from './flow.js'
import {
  benchSettings,
  printHeader,
  runScenario,
  type ScenarioOptions,
  type ScenarioRow,
} from './scenario.js'
import { type BenchServer, startBenchServer, startExampleApi } from './server.js'

/**
 * `npm run bench:mcp`: the links API's MCP endpoint against its REST twin, per call: reading one link
 * (tools/call get_link against GET /api/links/{id}) and creating one (tools/call create_link against
 * POST /api/links; the read also as a stateless MCP 2026-07-28 call), at BENCH_CONNECTIONS (64) for BENCH_SECONDS (10) after a 3 s warm-up, in one
 * links API process (local verification: JWKS + revocation feed), with the server's CPU per request.
 * The target: an MCP call costs at most twice its REST twin's server CPU. BENCH_ONLY: scenario name
 * prefixes (`REST`, `MCP`).
 */
const LINKS_PORT = 3403
const WARM_UP_SECONDS = 3
const only = process.env.BENCH_ONLY?.split(',')
const base = `http://127.0.0.1:${LINKS_PORT}`

const hidden = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll('&amp;', '&') ?? ''

/** A code authorized for `resource`: the first time through the consent page, then remembered. */
async function codeFor(server: BenchServer, party: BenchParty, resource: string): Promise<string> {
  const headers = { cookie: party.cookie }
  let res = await fetch(`${server.baseUrl}${party.authorizePath}&resource=${encodeURIComponent(resource)}`, {
    redirect: 'manual',
    headers,
  })
  if (res.status === 200) {
    const page = await res.text()
    res = await fetch(`${server.baseUrl}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        request: hidden(page, 'request'),
        csrf_token: hidden(page, 'csrf_token'),
        decision: 'allow',
      }),
    })
  }
  const code = new URL(res.headers.get('location') ?? 'x:').searchParams.get('code')
  if (!code) throw new Error(`bench: authorize answered ${res.status} without a code`)
  return code
}

/** Tokens for one resource: codes authorized for it, exchanged with it (its aud). */
async function tokensFor(server: BenchServer, party: BenchParty, resource: string, count: number) {
  const tokens: string[] = []
  for (let i = 0; i < count; i++) {
    const code = await codeFor(server, party, resource)
    const res = await fetch(`${server.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code, code_verifier: party.verifier, client_id: party.clientId, resource }),
    })
    const body = (await res.json()) as { access_token: string }
    if (!res.ok) throw new Error(`bench: token answered ${res.status}: ${JSON.stringify(body)}`)
    tokens.push(body.access_token)
  }
  return tokens
}

const server = await startBenchServer({ env: { ACCESS_TOKEN_TTL: '3600' } })
const rows: ScenarioRow[] = []
try {
  const scopes = ['links:read', 'links:write']
  const rest = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Links API (bench)',
    resource: `${base}/api`,
    scopes,
  })
  const mcp = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Links MCP (bench)',
    resource: `${base}/mcp`,
    scopes,
  })
  const party = await prepareParty(server)
  const restTokens = await tokensFor(server, party, `${base}/api`, 8)
  const mcpTokens = await tokensFor(server, party, `${base}/mcp`, 8)
  const links = await startExampleApi({
    dir: 'links-api',
    prefix: 'LINKS',
    port: LINKS_PORT,
    env: {
      LINKS_DATABASE_URL: server.databaseUrl,
      LINKAUTH_ISSUER: server.baseUrl,
      LINKS_RESOURCE_SERVER_ID: rest.id,
      LINKS_RESOURCE_SERVER_SECRET: rest.secret,
      LINKS_MCP_RESOURCE_SERVER_ID: mcp.id,
      LINKS_MCP_RESOURCE_SERVER_SECRET: mcp.secret,
    },
  })
  try {
    // One link to read, and one MCP session per token (its id is bound to the token's user).
    const created = await fetch(`${base}/api/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${restTokens[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target_url: 'https://bench.example/read', tags: ['bench'] }),
    })
    const linkId = ((await created.json()) as { id: string }).id
    const mcpHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
    const sessions = await Promise.all(
      mcpTokens.map(async (token) => {
        const res = await fetch(`${base}/mcp`, {
          method: 'POST',
          headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'bench', version: '1' },
            },
          }),
        })
        if (!res.ok) throw new Error(`bench: initialize answered ${res.status}: ${await res.text()}`)
        return res.headers.get('mcp-session-id')!
      }),
    )
    printHeader(` links-api MCP vs REST`)

    let next = 0
    const rotate = <T>(list: T[]) => list[next++ % list.length]!
    const restRequest = (method: string, path: string, body?: unknown): ScenarioOptions => ({
      url: `${base}${path}`,
      requests: [
        {
          method: method as 'GET',
          ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, authorization: `Bearer ${rotate(restTokens)}` },
          }),
        },
      ],
    })
    /**
     * A tools/call as a client of each revision sends it: 2025-11-25 in the token's session; 2026-07-28
     * stateless, with its _meta and the standard headers.
     */
    const toolCall = (
      name: string,
      args: Record<string, unknown>,
      revision = '2025-11-25',
    ): ScenarioOptions => {
      const stateless = revision === '2026-07-28'
      const meta = {
        'io.modelcontextprotocol/protocolVersion': revision,
        'io.modelcontextprotocol/clientCapabilities': {},
      }
      return {
        url: `${base}/mcp`,
        requests: [
          {
            method: 'POST',
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name, arguments: args, ...(stateless ? { _meta: meta } : {}) },
            }),
            setupRequest: (req) => {
              const i = next++ % mcpTokens.length
              const perRevision = stateless
                ? { 'mcp-method': 'tools/call', 'mcp-name': name }
                : { 'mcp-session-id': sessions[i]! }
              return {
                ...req,
                headers: {
                  ...req.headers,
                  ...mcpHeaders,
                  authorization: `Bearer ${mcpTokens[i]}`,
                  'mcp-protocol-version': revision,
                  ...perRevision,
                },
              }
            },
          },
        ],
      }
    }
    const scenarios: [string, ScenarioOptions][] = [
      ['REST read: GET /api/links/{id}', restRequest('GET', `/api/links/${linkId}`)],
      ['MCP read: tools/call get_link', toolCall('get_link', { id: linkId })],
      ['MCP 2026 read: tools/call get_link, stateless', toolCall('get_link', { id: linkId }, '2026-07-28')],
      [
        'REST create: POST /api/links',
        restRequest('POST', '/api/links', { target_url: 'https://bench.example/c' }),
      ],
      [
        'MCP create: tools/call create_link',
        toolCall('create_link', { target_url: 'https://bench.example/m' }),
      ],
    ]
    for (const [name, options] of scenarios) {
      if (only && !only.some((o) => name.startsWith(o))) continue
      await autocannon({ ...options, connections: benchSettings.connections, duration: WARM_UP_SECONDS })
      rows.push(await runScenario(name, options, undefined, '2xx', links.pid, server.databaseUrl))
    }
    const cpu = (prefix: string) => rows.find((r) => r.name.startsWith(prefix))?.cpu?.server
    for (const [kind, mcpPrefix] of [
      ['read', 'MCP read'],
      ['read (2026-07-28)', 'MCP 2026 read'],
      ['create', 'MCP create'],
    ] as const) {
      const restCpu = cpu(`REST ${kind.split(' ')[0]}`)
      const mcpCpu = cpu(mcpPrefix)
      if (restCpu && mcpCpu)
        console.log(`${kind}: MCP/REST server CPU per call ${(mcpCpu / restCpu).toFixed(2)}× (target ≤ 2×)`)
    }
  } finally {
    await links.stop()
  }
} finally {
  await server.stop()
}
