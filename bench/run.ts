import { clientDocument, type DocumentServer, startDocumentServer } from '../test/helpers/document-server.js'
import {
  BENCH_REDIRECT_URI,
  type BenchParty,
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

/**
 * BENCH_CLIENT=metadata-document: the authorize and code-exchange scenarios run twice, for the
 * registered client and, beside it, for a client_id URL naming a Client ID Metadata Document served
 * by a local HTTPS server (its document cached, max-age one day). The server then trusts that
 * server's certificate through CLIENT_METADATA_TEST_CA, which NODE_ENV=production refuses: the
 * whole run, both clients, is on NODE_ENV=test (nothing else in the server reads NODE_ENV).
 */
const withDocumentClient = process.env.BENCH_CLIENT === 'metadata-document'
if (process.env.BENCH_CLIENT !== undefined && !withDocumentClient)
  throw new Error('BENCH_CLIENT: expected metadata-document (or unset)')
const documents: DocumentServer | undefined = withDocumentClient ? await startDocumentServer() : undefined
const server = await startBenchServer({
  ...(documents
    ? {
        database: 'linkauth_bench_documents',
        port: 3430,
        adminPort: 3431,
        env: { NODE_ENV: 'test', CLIENT_METADATA_TEST_CA: documents.caPath },
      }
    : {}),
})

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

  // The clients the authorize and code-exchange scenarios run for: the registered one, and with
  // BENCH_CLIENT=metadata-document a client_id URL beside it (its document fetched at the first
  // authorize of prepareParty, then served from the kept row).
  const clients: { label: string; party: BenchParty }[] = [{ label: '', party }]
  if (documents) {
    const url = documents.publish(
      '/bench-client.json',
      clientDocument(documents.url('/bench-client.json'), {
        client_name: 'Bench Agent',
        redirect_uris: [BENCH_REDIRECT_URI],
      }),
      { 'cache-control': 'max-age=86400' },
    )
    clients.push({
      label: ' [metadata-document client]',
      party: await prepareParty(server, 'links:read links:write', url),
    })
  }

  for (const { label, party: client } of clients) {
    // Authorize with a signed-in user and remembered consent: each request mints a code (302).
    await run(
      `authorize, remembered consent (GET → 302 + code)${label}`,
      {
        url: server.baseUrl + client.authorizePath,
        headers: { cookie: client.cookie },
      },
      4000,
      '3xx',
    )

    // Code exchange: codes minted beforehand through the real authorize endpoint, each used once.
    if (!only || only.some((o) => 'code exchange'.startsWith(o) || o.startsWith('code'))) {
      const count = Number(process.env.BENCH_CODES ?? 30000)
      const codes = await mintCodes(server, client, count)
      let next = 0
      await run(
        `code exchange (POST /api/oauth/token)${label}`,
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
                  code_verifier: client.verifier,
                  client_id: client.clientId,
                }).toString(),
              }),
            },
          ],
        },
        2500,
      )
    }
    if (documents && label) console.log(`  document fetches: ${documents.hits('/bench-client.json')}`)
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
  await documents?.close()
}

const missed = rows.filter((r) => r.target && (r.rps < r.target || r.p99 > 50 || r.errors > 0))
console.log(missed.length ? `below target: ${missed.map((r) => r.name).join('; ')}` : 'all targets met')
