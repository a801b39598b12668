import autocannon from 'autocannon'
import pg from 'pg'
import { HOUSEKEEPING_TABLES } from '../src/housekeeping/housekeeping.repository.js'
import { prepareParty, registerResourceServer } from './flow.js'
import { startBenchServer } from './server.js'

/**
 * `npm run bench:soak`: the whole life of tokens over and over (authorize with remembered consent, code
 * exchange, refresh rotation, RFC 7009 revocation of access and refresh tokens, introspection,
 * metadata) against a server whose lifetimes are seconds and whose housekeeping runs every 5 s, while
 * the row count and pg_total_relation_size of every table housekeeping deletes from are sampled every
 * 5 s. Flat means: after warm-up (the longest lifetime of a row, 75 s, plus two runs), each table's
 * peak in the second half of the run stays within BOUND of its peak in the first half.
 */
const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 1800)
const amount = process.env.BENCH_SOAK_REQUESTS ? Number(process.env.BENCH_SOAK_REQUESTS) : undefined
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const warmUpSeconds = Number(process.env.BENCH_SOAK_WARMUP ?? 90)
const BOUND = { ratio: 1.25, rows: 200, bytes: 1024 * 1024 }
/** Refresh tokens waiting for their next rotation; the oldest are abandoned (their families expire). */
const IDLE_TOKENS = 256

const server = await startBenchServer({
  env: {
    WORKERS: '1',
    AUTH_CODE_TTL: '5',
    ACCESS_TOKEN_TTL: '5',
    REFRESH_TOKEN_TTL: '10',
    REFRESH_TOKEN_ABSOLUTE_TTL: '10',
    HOUSEKEEPING_INTERVAL: '5',
    HOUSEKEEPING_REPLAY_HORIZON: '0',
  },
})
const db = new pg.Client({ connectionString: server.databaseUrl })
let autovacuum = 'unknown'
type Sample = { at: number; rows: Record<string, number>; bytes: Record<string, number> }
const samples: Sample[] = []

async function sample(started: number): Promise<Sample> {
  const rows: Record<string, number> = {}
  const bytes: Record<string, number> = {}
  for (const table of HOUSEKEEPING_TABLES) {
    const { rows: r } = await db.query<{ n: number; size: string }>(
      `select count(*)::int as n, pg_total_relation_size('${table}') as size from ${table}`,
    )
    rows[table] = r[0]!.n
    bytes[table] = Number(r[0]!.size)
  }
  return { at: (Date.now() - started) / 1000, rows, bytes }
}

try {
  await db.connect()
  // Rows housekeeping bounds; sizes on disk stay flat only when PostgreSQL reuses the space (autovacuum).
  autovacuum = (await db.query<{ s: string }>(`select current_setting('autovacuum') as s`)).rows[0]!.s
  console.log(`PostgreSQL autovacuum: ${autovacuum}`)
  const party = await prepareParty(server)
  const basic = await registerResourceServer(server)
  const codes: string[] = []
  const idle: string[] = []
  const accessTokens: string[] = []
  const form = { 'content-type': 'application/x-www-form-urlencoded' }
  const body = (params: Record<string, string>) => new URLSearchParams(params).toString()
  const keep = (list: string[], value: string, max: number) => {
    list.push(value)
    if (list.length > max) list.shift()
  }
  const tokenAnswer = (status: number, text: string) => {
    if (status !== 200) return
    const answer = JSON.parse(text) as { refresh_token: string; access_token: string }
    keep(idle, answer.refresh_token, IDLE_TOKENS)
    keep(accessTokens, answer.access_token, IDLE_TOKENS)
  }
  let revocations = 0
  const requests: autocannon.Request[] = [
    {
      method: 'GET',
      path: party.authorizePath,
      headers: { cookie: party.cookie },
      onResponse: (_status, _body, _context, headers) => {
        const location = (headers as Record<string, string>).location
        const code = location && new URL(location).searchParams.get('code')
        if (code) keep(codes, code, IDLE_TOKENS)
      },
    },
    {
      method: 'POST',
      path: '/api/oauth/token',
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: body({
          code: codes.shift() ?? 'none',
          code_verifier: party.verifier,
          client_id: party.clientId,
        }),
      }),
      onResponse: tokenAnswer,
    },
    {
      method: 'POST',
      path: '/api/oauth/token',
      headers: form,
      setupRequest: (req) => ({
        ...req,
        body: body({
          grant_type: 'refresh_token',
          refresh_token: idle.pop() ?? 'none',
          client_id: party.clientId,
        }),
      }),
      onResponse: tokenAnswer,
    },
    {
      method: 'POST',
      path: '/api/oauth/revoke',
      headers: form,
      // Every other one an access token (deny list, event), else a refresh token (family revoked, event).
      setupRequest: (req) => ({
        ...req,
        body: body({
          token: (revocations++ % 2 === 0 ? accessTokens.shift() : idle.shift()) ?? 'none',
          client_id: party.clientId,
        }),
      }),
    },
    {
      method: 'POST',
      path: '/api/oauth/introspect',
      headers: { ...form, authorization: basic },
      setupRequest: (req) => ({ ...req, body: body({ token: accessTokens.at(-1) ?? 'none' }) }),
    },
    { method: 'GET', path: '/.well-known/oauth-authorization-server' },
  ]
  const started = Date.now()
  samples.push(await sample(started))
  let sampling = Promise.resolve()
  const timer = setInterval(() => {
    sampling = sampling.then(async () => {
      const s = await sample(started)
      samples.push(s)
      const shown = HOUSEKEEPING_TABLES.map((t) => `${t} ${s.rows[t]}`).join(', ')
      console.log(`${s.at.toFixed(0).padStart(5)} s  ${shown}`)
    })
  }, 5_000)
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      { url: server.baseUrl, connections, requests, ...(amount ? { amount } : { duration: seconds }) },
      (err, res) => (err ? reject(err) : resolve(res)),
    )
  })
  clearInterval(timer)
  await sampling
  const elapsed = (Date.now() - started) / 1000
  console.log(
    `${result.requests.total} requests in ${elapsed.toFixed(0)} s (${result.requests.average} req/s), ` +
      `2xx/3xx ${result['2xx'] + (result.non2xx - result['4xx'] - result['5xx'])}, 4xx ${result['4xx']} ` +
      `(spent or expired tokens the mix sends on purpose), 5xx ${result['5xx']}, errors ${result.errors + result.timeouts}`,
  )
  verdict()
  await housekeepingFigures()
} finally {
  await db.end().catch(() => undefined)
  await server.stop()
}

/** Per table: peak rows and bytes in each half after warm-up, and whether the second stayed in bound. */
function verdict(): void {
  const warm = samples.filter((s) => s.at >= warmUpSeconds)
  if (warm.length < 4) {
    console.log(`too short to judge: ${warm.length} samples after the ${warmUpSeconds} s warm-up (need 4)`)
    return
  }
  const half = Math.floor(warm.length / 2)
  const [first, second] = [warm.slice(0, half), warm.slice(half)]
  const peak = (list: Sample[], kind: 'rows' | 'bytes', table: string) =>
    Math.max(...list.map((s) => s[kind][table]!))
  let flat = true
  for (const table of HOUSEKEEPING_TABLES) {
    const [rows1, rows2] = [peak(first, 'rows', table), peak(second, 'rows', table)]
    const [bytes1, bytes2] = [peak(first, 'bytes', table), peak(second, 'bytes', table)]
    const ok = rows2 <= rows1 * BOUND.ratio + BOUND.rows && bytes2 <= bytes1 * BOUND.ratio + BOUND.bytes
    flat &&= ok
    console.log(
      `${ok ? 'flat ' : 'GREW '} ${table.padEnd(24)} rows ${rows1} → ${rows2}, ` +
        `${(bytes1 / 1024).toFixed(0)} → ${(bytes2 / 1024).toFixed(0)} KiB`,
    )
  }
  console.log(
    `${flat ? 'flat' : 'NOT FLAT'}: after ${warmUpSeconds} s, every table's peak in the second half within ` +
      `${(BOUND.ratio - 1) * 100} % + ${BOUND.rows} rows and + 1 MiB of its peak in the first half`,
  )
  if (autovacuum === 'off')
    console.log(
      'autovacuum is off on this PostgreSQL: deleted rows never free their space, so sizes grow whatever housekeeping does (BENCH_DATABASE_URL: a server with autovacuum on)',
    )
}

/** What housekeeping itself reported: rows deleted per table, runs and their mean duration. */
async function housekeepingFigures(): Promise<void> {
  const res = await fetch(`${server.adminUrl}/metrics`, {
    headers: { authorization: `Bearer ${server.adminToken}` },
  })
  const lines = (await res.text()).split('\n')
  const value = (series: string) => Number(lines.find((l) => l.startsWith(`${series} `))?.split(' ')[1] ?? 0)
  const deleted = HOUSEKEEPING_TABLES.map(
    (t) => `${t} ${value(`linkauth_housekeeping_deleted_rows_total{table="${t}"}`)}`,
  )
  const runs = value('linkauth_housekeeping_run_duration_seconds_count{outcome="completed"}')
  const total = value('linkauth_housekeeping_run_duration_seconds_sum{outcome="completed"}')
  console.log(`housekeeping deleted: ${deleted.join(', ')}`)
  console.log(
    `housekeeping runs completed: ${runs}, mean ${((total / Math.max(runs, 1)) * 1000).toFixed(0)} ms`,
  )
}
