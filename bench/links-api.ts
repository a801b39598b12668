import autocannon from 'autocannon'
import { admin, dpopKey, dpopProofs, exchangeCodes, mintCodes, prepareParty } from './flow.js'
import {
  benchSettings,
  printHeader,
  runScenario,
  type ScenarioOptions,
  type ScenarioRow,
} from './scenario.js'
import { type BenchServer, startBenchServer, startExampleApi } from './server.js'

/**
 * `npm run bench:links`: a protected read of the links API (GET /api/links, a page of 20 links) at
 * BENCH_CONNECTIONS (64), with local verification (JWKS + revocation feed) against introspection on
 * every request (cache off), and with introspection's default 5 s cache; then local verification of
 * DPoP-bound tokens (RFC 9449), each request with a fresh proof (`ath`, a new `jti` for the API's
 * replay store) signed by the bench client, beside the Bearer figure. Each mode runs in a fresh
 * links API process, warmed up for 3 s before the BENCH_SECONDS (10) measured. BENCH_ONLY: mode
 * name prefixes (`local`, `introspection`, `DPoP`). Both services run as
 * their own processes: the authorization server's production build (dist/) and the links API, on
 * one fresh PostgreSQL database (the links API in its own schema).
 */
const LINKS_PORT = 3402
const WARM_UP_SECONDS = 3
const only = process.env.BENCH_ONLY?.split(',')

const startLinksApi = (server: BenchServer, env: Record<string, string>) =>
  startExampleApi({
    dir: 'links-api',
    prefix: 'LINKS',
    port: LINKS_PORT,
    env: { LINKS_DATABASE_URL: server.databaseUrl, LINKAUTH_ISSUER: server.baseUrl, ...env },
  })

// Tokens must outlive the run: every scenario reuses them. A token requested without `resource`
// carries ACCESS_TOKEN_AUDIENCE: the links API's resource identifier (LINKS_API_RESOURCE's default).
const server = await startBenchServer({
  env: { ACCESS_TOKEN_TTL: '3600', ACCESS_TOKEN_AUDIENCE: `http://127.0.0.1:${LINKS_PORT}/api` },
})
const rows: ScenarioRow[] = []
try {
  const party = await prepareParty(server)
  const rs = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Links API (bench)',
  })
  // One user, several tokens (as several sessions of one application would hold).
  const { accessTokens } = await exchangeCodes(server, party, await mintCodes(server, party, 16))
  // The same application with a DPoP key: its tokens carry cnf.jkt and need a proof of that key.
  const key = dpopKey()
  const dpop = await exchangeCodes(
    server,
    party,
    await mintCodes(server, party, 16),
    16,
    dpopProofs(`${server.baseUrl}/api/oauth/token`, key),
  )
  const credentials = { LINKS_RESOURCE_SERVER_ID: rs.id, LINKS_RESOURCE_SERVER_SECRET: rs.secret }
  printHeader(` links-api page=20`)

  type Mode = readonly [label: string, env: Record<string, string>, scheme?: 'DPoP']
  const modes: readonly Mode[] = [
    ['local verification (JWKS + revocation feed)', { LINKS_VERIFICATION: 'local' }],
    [
      'introspection per request (cache 0)',
      { LINKS_VERIFICATION: 'introspection', LINKS_INTROSPECTION_CACHE: '0' },
    ],
    [
      'introspection, 5 s cache (default)',
      { LINKS_VERIFICATION: 'introspection', LINKS_INTROSPECTION_CACHE: '5' },
    ],
    ['DPoP, local verification (proof per request)', { LINKS_VERIFICATION: 'local' }, 'DPoP'],
  ]
  let seeded = false
  for (const [label, env, scheme] of modes) {
    if (only && !only.some((o) => label.startsWith(o))) continue
    const links = await startLinksApi(server, { ...credentials, ...env })
    try {
      if (!seeded) {
        for (let i = 0; i < 20; i++) {
          const res = await fetch(`${links.baseUrl}/api/links`, {
            method: 'POST',
            headers: { authorization: `Bearer ${accessTokens[0]}`, 'content-type': 'application/json' },
            body: JSON.stringify({ target_url: `https://bench.example/${i}`, tags: ['bench'] }),
          })
          if (res.status !== 201) throw new Error(`bench: create answered ${res.status}: ${await res.text()}`)
        }
        seeded = true
      }
      let next = 0
      const url = `${links.baseUrl}/api/links`
      const authorization = (): Record<string, string> => {
        if (scheme !== 'DPoP')
          return { authorization: `Bearer ${accessTokens[next++ % accessTokens.length]}` }
        const token = dpop.accessTokens[next++ % dpop.accessTokens.length]!
        return { authorization: `DPoP ${token}`, dpop: key.proof('GET', url, token) }
      }
      const options: ScenarioOptions = {
        url,
        requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...authorization() } }) }],
      }
      // A fresh process each time: warm it up (JIT, connection pools) before measuring.
      await autocannon({ ...options, connections: benchSettings.connections, duration: WARM_UP_SECONDS })
      const calls = async () =>
        (
          (await (await fetch(`${links.baseUrl}/readyz`)).json()) as {
            verification: { introspection_calls: number }
          }
        ).verification.introspection_calls
      const before = await calls()
      rows.push(await runScenario(`GET /api/links, ${label}`, options))
      console.log(
        `${''.padEnd(4)}introspection calls by the links API during the run: ${(await calls()) - before}`,
      )
    } finally {
      await links.stop()
    }
  }
} finally {
  await server.stop()
}
const local = rows.find((r) => r.name.startsWith('GET /api/links, local'))
const introspected = rows.find((r) => r.name.startsWith('GET /api/links, introspection per request'))
const bound = rows.find((r) => r.name.startsWith('GET /api/links, DPoP'))
if (local && introspected)
  console.log(
    `local verification serves ${(local.rps / introspected.rps).toFixed(1)}× the requests of introspection per request (${benchSettings.connections} connections)`,
  )
if (local && bound)
  console.log(
    `DPoP-bound tokens: ${((bound.rps / local.rps) * 100).toFixed(0)}% of the Bearer requests per second`,
  )
