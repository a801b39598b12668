import autocannon from 'autocannon'
import { admin, exchangeCodes, mintCodes, prepareParty } from './flow.js'
import {
  benchSettings,
  printHeader,
  runScenario,
  type ScenarioOptions,
  type ScenarioRow,
} from './scenario.js'
import { startBenchServer, startExampleApi } from './server.js'

/**
 * `npm run bench:commerce`: the commerce API's two hot paths at BENCH_CONNECTIONS (64) for
 * BENCH_SECONDS (10) each, after 3 s of warm-up: click redirects (`GET /{slug}`, public: a click
 * row written, 302 with the click id) and conversions (`POST /api/conversions`, `ecommerce:write`,
 * local token verification: a new order each request, on a pool of 200 click ids). BENCH_ONLY:
 * scenario name prefixes (`click`, `conversion`). Both services run as their own processes: the
 * authorization server's production build (dist/) and the commerce API, on one fresh PostgreSQL
 * database (the commerce API in its own schema). COMMERCE_NODE_ARGS: node flags for the commerce API.
 */
const PORT = 3410
const ADMIN_PORT = 3411
const COMMERCE_PORT = 3412
const WARM_UP_SECONDS = 3
const CLICK_POOL = 200
const only = process.env.BENCH_ONLY?.split(',')
const baseUrl = `http://127.0.0.1:${COMMERCE_PORT}`
const resource = `${baseUrl}/api`

const startCommerceApi = (env: Record<string, string>) =>
  startExampleApi({ dir: 'commerce-api', prefix: 'COMMERCE', port: COMMERCE_PORT, env })

// Tokens outlive the run; a token without `resource` carries ACCESS_TOKEN_AUDIENCE: the commerce API's.
const server = await startBenchServer({
  port: PORT,
  adminPort: ADMIN_PORT,
  database: 'linkauth_bench_commerce',
  env: { ACCESS_TOKEN_TTL: '3600', ACCESS_TOKEN_AUDIENCE: resource },
})
const rows: ScenarioRow[] = []
try {
  const party = await prepareParty(server, 'ecommerce:write products:sync')
  const rs = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Commerce API (bench)',
  })
  const { accessTokens } = await exchangeCodes(server, party, await mintCodes(server, party, 16))
  const commerce = await startCommerceApi({
    COMMERCE_DATABASE_URL: server.databaseUrl,
    LINKAUTH_ISSUER: server.baseUrl,
    COMMERCE_API_RESOURCE: resource,
    COMMERCE_RESOURCE_SERVER_ID: rs.id,
    COMMERCE_RESOURCE_SERVER_SECRET: rs.secret,
  })
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        redirect: 'manual',
        headers: { authorization: `Bearer ${accessTokens[0]}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      return res
    }
    const synced = await call('POST', '/api/products/batch', {
      products: [
        {
          product_id: 'BENCH-1',
          title: 'Bench product',
          url: 'https://shop.example/p/bench-1',
          price: '19.99',
          currency: 'EUR',
          availability: 'in_stock',
        },
      ],
    })
    if (synced.status !== 200) throw new Error(`bench: product sync answered ${synced.status}`)
    const link = await call('POST', '/api/links', {
      product_id: 'BENCH-1',
      slug: 'bench-link',
      campaign: 'bench',
      utm: { source: 'bench', medium: 'load' },
    })
    if (link.status !== 201) throw new Error(`bench: link answered ${link.status}`)
    const clickIds: string[] = []
    for (let i = 0; i < CLICK_POOL; i++) {
      const hop = await fetch(`${baseUrl}/bench-link`, { redirect: 'manual' })
      clickIds.push(new URL(hop.headers.get('location')!).searchParams.get('lclid')!)
    }
    printHeader(` commerce-api`)

    const clicks: ScenarioOptions = { url: `${baseUrl}/bench-link` }
    let order = 0
    const conversions: ScenarioOptions = {
      url: `${baseUrl}/api/conversions`,
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => ({
            ...req,
            headers: {
              ...req.headers,
              'content-type': 'application/json',
              authorization: `Bearer ${accessTokens[order % accessTokens.length]}`,
            },
            body: JSON.stringify({
              click_id: clickIds[order % clickIds.length],
              order_id: `bench-${process.pid}-${order++}`,
              value: '19.99',
              currency: 'EUR',
            }),
          }),
        },
      ],
    }
    const scenarios: [string, ScenarioOptions, '2xx' | '3xx'][] = [
      ['click redirects: GET /{slug} → 302 with lclid', clicks, '3xx'],
      ['conversions: POST /api/conversions → 201', conversions, '2xx'],
    ]
    for (const [name, options, okClass] of scenarios) {
      if (only && !only.some((o) => name.startsWith(o))) continue
      await autocannon({ ...options, connections: benchSettings.connections, duration: WARM_UP_SECONDS })
      rows.push(await runScenario(name, options, undefined, okClass, commerce.pid, server.databaseUrl))
    }
    const readyz = (await (await fetch(`${baseUrl}/readyz`)).json()) as {
      verification: { introspection_calls: number }
    }
    console.log(
      `${''.padEnd(4)}introspection calls by the commerce API: ${readyz.verification.introspection_calls}`,
    )
  } finally {
    await commerce.stop()
  }
} finally {
  await server.stop()
}
if (rows.some((r) => r.errors > 0)) process.exitCode = 1
