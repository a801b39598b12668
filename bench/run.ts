import { clientDocument, type DocumentServer, startDocumentServer } from '../test/helpers/document-server.js'
import {
  BENCH_REDIRECT_URI,
  type BenchParty,
  accountAppsRequest,
  dpopProofs,
  exchangeCodes,
  exchangeRequest,
  introspectionRequest,
  mintCodes,
  prepareParty,
  refreshChainRequest,
  registerResourceServer,
  revocationRequest,
} from './flow.js'
import {
  benchRepeat,
  benchSettings,
  medianRow,
  printHeader,
  printRow,
  runScenario,
  type ScenarioOptions,
  type ScenarioRow,
} from './scenario.js'
import { type BenchServer, benchServerDir, startBenchServer } from './server.js'
import { prepareSignIn, SIGN_IN_SERVER_ENV, signInRequest } from './sign-in.js'
import { startOtlpSink } from './otlp-sink.js'

/**
 * `npm run bench`: every scenario against the production build on PostgreSQL on this machine,
 * printing requests per second, p50/p99 latency, errors, CPU per request and the server's peak memory.
 * Settings: BENCH_CONNECTIONS (64), BENCH_SECONDS (10), BENCH_REPEAT (1: runs of each scenario, the
 * median row printed after them), WORKERS (server processes, default 1), BENCH_ONLY (comma-separated
 * name prefixes), BENCH_SERVER_DIR (another checkout whose built server to measure), BENCH_TRACING
 * (1: the server traces every request, exporting over OTLP to a local endpoint that discards).
 */
interface Scenario {
  name: string
  /** Made again before each run (codes and refresh tokens are spent by a run). */
  prepare: (server: BenchServer) => Promise<ScenarioOptions>
  target?: number
  okClass?: '2xx' | '3xx' | '4xx'
}

/**
 * BENCH_CLIENT=metadata-document: the authorize and code-exchange scenarios run twice, for the
 * registered client and, beside it, for a client_id URL naming a Client ID Metadata Document served
 * by a local HTTPS server (its document cached, max-age one day). The server then trusts that
 * server's certificate through CLIENT_METADATA_TEST_CA, which NODE_ENV=production refuses: the
 * whole run, both clients, is on NODE_ENV=test (nothing else in the server reads NODE_ENV), with a
 * database and ports of its own.
 */
const withDocumentClient = process.env.BENCH_CLIENT === 'metadata-document'
if (process.env.BENCH_CLIENT !== undefined && !withDocumentClient)
  throw new Error('BENCH_CLIENT: expected metadata-document (or unset)')

const { connections } = benchSettings
const only = process.env.BENCH_ONLY?.split(',')
const selected = (s: Scenario) => !only || only.some((o) => s.name.startsWith(o))
const rows: ScenarioRow[] = []

/** Runs each selected scenario BENCH_REPEAT times on `server`; with repeats, the median row follows. */
async function runAll(server: BenchServer, scenarios: Scenario[]): Promise<void> {
  for (const scenario of scenarios.filter(selected)) {
    const runs: ScenarioRow[] = []
    for (let i = 1; i <= benchRepeat; i++) {
      const options = await scenario.prepare(server)
      const name = benchRepeat > 1 ? `${scenario.name} #${i}` : scenario.name
      runs.push(
        await runScenario(name, options, scenario.target, scenario.okClass, server.pid, server.databaseUrl),
      )
    }
    const median = { ...medianRow(runs), name: scenario.name }
    if (benchRepeat > 1) printRow(median, `${scenario.name} (median)`)
    rows.push(median)
  }
}

/** The token paths and the documents, rate limits off (a benchmark is one address, one client). */
async function tokenScenarios(server: BenchServer, documents?: DocumentServer): Promise<Scenario[]> {
  const party = await prepareParty(server)
  const codeCount = Number(process.env.BENCH_CODES ?? 30000)
  const exchange = (codes: string[], dpop?: () => string, client: BenchParty = party): ScenarioOptions =>
    exchangeRequest(server, client, codes, dpop)
  const tokenUrl = `${server.baseUrl}/api/oauth/token`
  let introspected: { basic: string; tokens: Awaited<ReturnType<typeof exchangeCodes>> } | undefined
  const introspection = async () => {
    introspected ??= {
      basic: await registerResourceServer(server),
      tokens: await exchangeCodes(server, party, await mintCodes(server, party, 1000)),
    }
    return introspected
  }
  // With BENCH_CLIENT=metadata-document, a client_id URL beside the registered client (its document
  // fetched at the first authorize of prepareParty, then served from the kept row).
  const documentClients: { label: string; party: BenchParty }[] = []
  if (documents) {
    const url = documents.publish(
      '/bench-client.json',
      clientDocument(documents.url('/bench-client.json'), {
        client_name: 'Bench Agent',
        redirect_uris: [BENCH_REDIRECT_URI],
      }),
      { 'cache-control': 'max-age=86400' },
    )
    documentClients.push({
      label: ' [metadata-document client]',
      party: await prepareParty(server, 'links:read links:write', url),
    })
  }
  return [
    {
      name: 'metadata (GET /.well-known/oauth-authorization-server)',
      prepare: async () => ({ url: `${server.baseUrl}/.well-known/oauth-authorization-server` }),
    },
    {
      name: 'JWKS (GET /.well-known/jwks.json)',
      prepare: async () => ({ url: `${server.baseUrl}/.well-known/jwks.json` }),
    },
    {
      // Authorize with a signed-in user and remembered consent: each request mints a code (302).
      name: 'authorize, remembered consent (GET → 302 + code)',
      prepare: async () => ({
        url: server.baseUrl + party.authorizePath,
        headers: { cookie: party.cookie },
      }),
      target: 4000,
      okClass: '3xx',
    },
    {
      // Codes minted beforehand through the real authorize endpoint, each used once.
      name: 'code exchange (POST /api/oauth/token)',
      prepare: async () => exchange(await mintCodes(server, party, codeCount)),
      target: 2500,
    },
    ...documentClients.flatMap(({ label, party: client }): Scenario[] => [
      {
        name: `authorize, remembered consent (GET → 302 + code)${label}`,
        prepare: async () => ({
          url: server.baseUrl + client.authorizePath,
          headers: { cookie: client.cookie },
        }),
        target: 4000,
        okClass: '3xx',
      },
      {
        name: `code exchange (POST /api/oauth/token)${label}`,
        prepare: async () => exchange(await mintCodes(server, client, codeCount), undefined, client),
        target: 2500,
      },
    ]),
    {
      // With a DPoP proof per request (RFC 9449): one signature check and one replay-store write more.
      name: 'code exchange with DPoP (POST /api/oauth/token)',
      prepare: async () => exchange(await mintCodes(server, party, codeCount), dpopProofs(tokenUrl)),
    },
    {
      // One family per connection, each refreshed in sequence with its newest token.
      name: 'refresh rotation (POST /api/oauth/token)',
      prepare: async () => {
        const seeds = await exchangeCodes(server, party, await mintCodes(server, party, connections * 2))
        return { url: server.baseUrl, requests: [refreshChainRequest(party, seeds.refreshTokens)] }
      },
      target: 3000,
    },
    {
      // Families bound to a DPoP key: each refresh carries a proof made with it.
      name: 'refresh rotation with DPoP (POST /api/oauth/token)',
      prepare: async () => {
        const proof = dpopProofs(tokenUrl)
        const codes = await mintCodes(server, party, connections * 2)
        const bound = await exchangeCodes(server, party, codes, 32, proof)
        return { url: server.baseUrl, requests: [refreshChainRequest(party, bound.refreshTokens, proof)] }
      },
    },
    // Introspection of access tokens and of refresh tokens, as a registered resource server.
    ...(['access', 'refresh'] as const).map((kind): Scenario => ({
      name: `introspection of ${kind} tokens (POST /api/oauth/introspect)`,
      prepare: async () => {
        const { basic, tokens } = await introspection()
        const list = kind === 'access' ? tokens.accessTokens : tokens.refreshTokens
        return { url: server.baseUrl, requests: [introspectionRequest(basic, list)] }
      },
      target: 12000,
    })),
    {
      // RFC 7009 revocation of refresh tokens, each once: the family is revoked and its event written.
      name: 'revocation of refresh tokens (POST /api/oauth/revoke)',
      prepare: async () => {
        const count = Number(process.env.BENCH_REVOCATIONS ?? 5000)
        const { refreshTokens } = await exchangeCodes(server, party, await mintCodes(server, party, count))
        return revocationRequest(server, party, refreshTokens)
      },
    },
    {
      // The signed-in user's connected applications (the account page).
      name: 'account app list (GET /account/apps)',
      prepare: async () => accountAppsRequest(server, party),
    },
  ]
}

/**
 * Sign-in with the password form, rate limits on with the memory store and limits too high to answer
 * 429 (sign-in.ts): what argon2 and the reserved attempts cost. A server of its own, started after
 * the other scenarios' server has stopped.
 */
function signInScenarios(): Scenario[] {
  return (['right', 'wrong'] as const).map((password) => ({
    name: `sign-in, ${password} password (POST /login)`,
    prepare: async (server) => signInRequest(server, await prepareSignIn(server), password),
    okClass: password === 'right' ? '3xx' : '4xx',
  }))
}

// The servers inherit this environment: with tracing on they export to the sink.
const sink = process.env.BENCH_TRACING === '1' ? await startOtlpSink() : undefined
if (sink) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.url
printHeader(
  ` workers=${process.env.WORKERS ?? 1}${benchServerDir ? ` server=${benchServerDir}` : ''}${sink ? ' tracing=on' : ''}`,
)
// The token scenarios' server is started unless BENCH_ONLY names sign-in scenarios alone.
if (!only || only.some((o) => !o.startsWith('sign-in'))) {
  const documents = withDocumentClient ? await startDocumentServer() : undefined
  const server = await startBenchServer(
    documents
      ? {
          database: 'linkauth_bench_documents',
          port: 3430,
          adminPort: 3431,
          env: { NODE_ENV: 'test', CLIENT_METADATA_TEST_CA: documents.caPath },
        }
      : {},
  )
  try {
    await runAll(server, await tokenScenarios(server, documents))
    if (documents)
      console.log(
        `document fetches: ${documents.hits('/bench-client.json')} (1: the cached path was measured)`,
      )
  } finally {
    await server.stop()
    await documents?.close()
  }
}
if (signInScenarios().some(selected)) {
  const server = await startBenchServer({ env: SIGN_IN_SERVER_ENV })
  try {
    await runAll(server, signInScenarios())
  } finally {
    await server.stop()
  }
}

if (sink) {
  console.log(sink.summary())
  await sink.close()
}
const missed = rows.filter((r) => r.target && (r.rps < r.target || r.p99 > 50 || r.errors > 0))
console.log(missed.length ? `below target: ${missed.map((r) => r.name).join('; ')}` : 'all targets met')
