import {
  dpopProofs,
  exchangeCodes,
  introspectionRequest,
  mintCodes,
  prepareParty,
  refreshChainRequest,
  registerResourceServer,
} from './flow.js'
import {
  benchSettings,
  printHeader,
  runScenario,
  type ScenarioOptions,
  type ScenarioRow,
} from './scenario.js'
import { startBenchServer } from './server.js'

/**
 * `npm run bench`: every scenario against the production build on PostgreSQL on this machine,
 * printing requests per second, p50/p99 latency and errors. Settings: BENCH_CONNECTIONS (64),
 * BENCH_SECONDS (10), WORKERS (server processes, default 1), BENCH_ONLY (comma-separated names).
 */
const { connections } = benchSettings
const only = process.env.BENCH_ONLY?.split(',')
const rows: ScenarioRow[] = []
const server = await startBenchServer()

async function run(
  name: string,
  options: ScenarioOptions,
  target?: number,
  okClass: '2xx' | '3xx' = '2xx',
): Promise<void> {
  if (only && !only.some((o) => name.startsWith(o))) return
  rows.push(await runScenario(name, options, target, okClass, server.pid, server.databaseUrl))
}

try {
  const party = await prepareParty(server)
  printHeader(` workers=${process.env.WORKERS ?? 1}`)

  await run('metadata (GET /.well-known/oauth-authorization-server)', {
    url: `${server.baseUrl}/.well-known/oauth-authorization-server`,
  })
  await run('JWKS (GET /.well-known/jwks.json)', { url: `${server.baseUrl}/.well-known/jwks.json` })

  // Authorize with a signed-in user and remembered consent: each request mints a code (302).
  await run(
    'authorize, remembered consent (GET → 302 + code)',
    {
      url: server.baseUrl + party.authorizePath,
      headers: { cookie: party.cookie },
    },
    4000,
    '3xx',
  )

  // Code exchange: codes minted beforehand through the real authorize endpoint, each used once.
  if (!only || only.some((o) => 'code exchange'.startsWith(o) || o.startsWith('code'))) {
    const count = Number(process.env.BENCH_CODES ?? 30000)
    const codes = await mintCodes(server, party, count)
    let next = 0
    await run(
      'code exchange (POST /api/oauth/token)',
      {
        url: `${server.baseUrl}/api/oauth/token`,
        method: 'POST',
        amount: codes.length,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: new URLSearchParams({
                code: codes[next++] ?? 'exhausted',
                code_verifier: party.verifier,
                client_id: party.clientId,
              }).toString(),
            }),
          },
        ],
      },
      2500,
    )
  }

  // The same with a DPoP proof per request (RFC 9449): one signature check and one replay-store write more.
  if (!only || only.some((o) => o.startsWith('code'))) {
    const count = Number(process.env.BENCH_CODES ?? 30000)
    const codes = await mintCodes(server, party, count)
    const proof = dpopProofs(`${server.baseUrl}/api/oauth/token`)
    let next = 0
    await run('code exchange with DPoP (POST /api/oauth/token)', {
      url: `${server.baseUrl}/api/oauth/token`,
      method: 'POST',
      amount: codes.length,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof() },
            body: new URLSearchParams({
              code: codes[next++] ?? 'exhausted',
              code_verifier: party.verifier,
              client_id: party.clientId,
            }).toString(),
          }),
        },
      ],
    })
  }

  // Refresh rotation: one family per connection, each refreshed in sequence with its newest token.
  if (!only || only.some((o) => o.startsWith('refresh'))) {
    const seeds = await exchangeCodes(server, party, await mintCodes(server, party, connections * 2))
    await run(
      'refresh rotation (POST /api/oauth/token)',
      { url: server.baseUrl, requests: [refreshChainRequest(party, seeds.refreshTokens)] },
      3000,
    )
    // Families bound to a DPoP key: each refresh carries a proof made with it.
    const proof = dpopProofs(`${server.baseUrl}/api/oauth/token`)
    const bound = await exchangeCodes(
      server,
      party,
      await mintCodes(server, party, connections * 2),
      32,
      proof,
    )
    await run('refresh rotation with DPoP (POST /api/oauth/token)', {
      url: server.baseUrl,
      requests: [refreshChainRequest(party, bound.refreshTokens, proof)],
    })
  }
  // Introspection of access tokens and of refresh tokens, as a registered resource server.
  if (!only || only.some((o) => o.startsWith('introspection'))) {
    const basic = await registerResourceServer(server)
    const tokens = await exchangeCodes(server, party, await mintCodes(server, party, 1000))
    for (const [kind, list] of [
      ['access', tokens.accessTokens],
      ['refresh', tokens.refreshTokens],
    ] as const) {
      await run(
        `introspection of ${kind} tokens (POST /api/oauth/introspect)`,
        { url: server.baseUrl, requests: [introspectionRequest(basic, list)] },
        12000,
      )
    }
  }
} finally {
  await server.stop()
}

const missed = rows.filter((r) => r.target && (r.rps < r.target || r.p99 > 50 || r.errors > 0))
console.log(missed.length ? `below target: ${missed.map((r) => r.name).join('; ')}` : 'all targets met')
