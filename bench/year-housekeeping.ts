import pg from 'pg'
import { benchDatabase } from './cpu.js'
import { prepareParty } from './flow.js'
import { benchRepeat, medianRow, printHeader, runScenario, type ScenarioRow } from './scenario.js'
import { startBenchServer } from './server.js'
import { databaseSizes, printSizes, type YearSizes, yearDatabaseUrl } from './year-fill.js'
import { recordedFill, yearScenarios } from './year.js'

/**
 * `npm run bench:year-housekeeping` (issue 41): housekeeping on the year-filled database (year-fill.ts;
 * run `npm run bench:year-fill` first, since this deletes its backlog).
 *
 * Two server instances on that database: one serves the hot paths (refresh rotation and code
 * exchange) with housekeeping off, the other, started after the first measurements, only runs
 * housekeeping (on its schedule, every second), so that its CPU (its process, and its PostgreSQL
 * backends, found by their application_name) is left out of the hot paths' figures. The hot paths
 * run BENCH_REPEAT times before, then BENCH_REPEAT times while housekeeping runs (target: at most
 * 10 % more server+pg CPU per request). Rows deleted are read from pg_stat_user_tables (n_tup_del)
 * every 5 s for YEAR_HOUSEKEEPING_SECONDS (300), then the housekeeping instance stops (after its
 * current batch). Then the sizes on disk: before, after, and after a VACUUM.
 */
const HOUSEKEEPING_APP = 'linkauth-housekeeping'
const maxSeconds = Number(process.env.YEAR_HOUSEKEEPING_SECONDS ?? 300)
const SCENARIOS = ['refresh rotation', 'code exchange']

const { adminUrl, database, url } = yearDatabaseUrl()
const fill = (await recordedFill(adminUrl, database)) as YearSizes | undefined
if (!fill) throw new Error(`${database} holds no year fill: run npm run bench:year-fill first`)
printHeader(` year=${database} ${JSON.stringify(fill)}`)

const client = new pg.Client({ connectionString: url })
await client.connect()
const deletedSoFar = async () => {
  const { rows } = await client.query<{ n: string }>(
    'select coalesce(sum(n_tup_del), 0) as n from pg_stat_user_tables',
  )
  return Number(rows[0]!.n)
}
const before = await databaseSizes(client)
console.log('\nbefore housekeeping:')
printSizes(before)

const env = { HOUSEKEEPING_INTERVAL: '0' }
const hot = await startBenchServer({ database, keepDatabase: true, port: 3402, adminPort: 3403, env })
const keeperUrl = new URL(url)
keeperUrl.searchParams.set('application_name', HOUSEKEEPING_APP)
let keeper: Awaited<ReturnType<typeof startBenchServer>> | undefined
/**
 * The housekeeping instance, on its own schedule (HOUSEKEEPING_INTERVAL=1: a run a second after the
 * previous one ended; one run goes through the whole backlog). POST /admin/housekeeping/run is not
 * used: on a year's backlog the run outlasts the HTTP timeouts.
 */
const startKeeper = async () => {
  keeper = await startBenchServer({
    database,
    keepDatabase: true,
    port: 3404,
    adminPort: 3405,
    env: { HOUSEKEEPING_INTERVAL: '1', LOG_LEVEL: 'info', DATABASE_URL: keeperUrl.toString() },
  })
}
const stopKeeper = async () => {
  const running = keeper
  keeper = undefined
  await running?.stop()
}
const measured = await benchDatabase(hot.databaseUrl)
if (measured) measured.excluded = new Set()
/** The housekeeping instance's backends, left out of the hot paths' PostgreSQL CPU. */
const excludeKeeper = async () => {
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where application_name = $1',
    [HOUSEKEEPING_APP],
  )
  for (const row of rows) measured?.excluded?.add(String(row.pid))
}

const lines: string[] = []
try {
  const scenarios = (await yearScenarios(hot, await prepareParty(hot))).filter((s) =>
    SCENARIOS.includes(s.name),
  )
  const runAll = async (label: string) => {
    const medians: ScenarioRow[] = []
    for (const scenario of scenarios) {
      const runs: ScenarioRow[] = []
      for (let i = 1; i <= benchRepeat; i++) {
        await excludeKeeper()
        runs.push(
          await runScenario(
            `${scenario.name} [${label}] #${i}`,
            await scenario.prepare(),
            undefined,
            scenario.okClass,
            hot.pid,
            hot.databaseUrl,
          ),
        )
      }
      medians.push({ ...medianRow(runs), name: scenario.name })
    }
    return medians
  }
  const quiet = await runAll('housekeeping idle')

  // Housekeeping, from the other instance; its deletions sampled every 5 s.
  const deletedAtStart = await deletedSoFar()
  const started = performance.now()
  await startKeeper()
  const samples: { seconds: number; deleted: number }[] = []
  const sampler = setInterval(() => {
    void excludeKeeper()
    void deletedSoFar().then((n) =>
      samples.push({ seconds: (performance.now() - started) / 1000, deleted: n - deletedAtStart }),
    )
  }, 5000)
  await new Promise((r) => setTimeout(r, 3000))
  const busy = await runAll('housekeeping running')
  while ((performance.now() - started) / 1000 < maxSeconds) await new Promise((r) => setTimeout(r, 1000))
  clearInterval(sampler)
  await stopKeeper()
  await new Promise((r) => setTimeout(r, 1500))
  const deleted = (await deletedSoFar()) - deletedAtStart
  const seconds = (performance.now() - started) / 1000
  lines.push('')
  lines.push('hot paths, median server+pg µs/request and p99 ms, housekeeping idle → running:')
  for (const [i, q] of quiet.entries()) {
    const b = busy[i]!
    const cpu = (b.cpu?.serverAndPostgres ?? 0) / (q.cpu?.serverAndPostgres ?? 1)
    lines.push(
      `  ${q.name.padEnd(20)} ${q.cpu?.serverAndPostgres} → ${b.cpu?.serverAndPostgres} µs (${cpu.toFixed(2)}×, target ≤ 1.10)  p99 ${q.p99} → ${b.p99} ms`,
    )
  }
  lines.push(`housekeeping: stopped after ${seconds.toFixed(0)} s (its "housekeeping run" log lines above)`)
  lines.push(
    `rows deleted (pg_stat_user_tables, incl. cascades): ${deleted} in ${seconds.toFixed(0)} s = ${Math.round(deleted / seconds)} rows/s`,
  )
  for (const s of samples.filter((_, i) => i % 6 === 5))
    lines.push(`  ${s.seconds.toFixed(0).padStart(5)} s: ${s.deleted} rows deleted`)
  // A day of the year's traffic, in rows that housekeeping eventually deletes (the fill's rows per 365).
  const day = Math.round(
    (fill.refreshTokens +
      2 * fill.refreshFamilies +
      fill.revocationEvents +
      fill.dynamicClients * (1 - fill.usedDynamicShare)) /
      365,
  )
  lines.push(
    `a day's expired rows (a 365th of the fill's tokens, families, codes, events, unused registrations): ${day}, deleted in ${(day / (deleted / seconds)).toFixed(0)} s`,
  )
} finally {
  await hot.stop()
  await stopKeeper()
}
console.log(lines.join('\n'))
console.log('\nafter housekeeping:')
printSizes(await databaseSizes(client))
const vacuumStarted = performance.now()
await client.query('vacuum')
console.log(`\nvacuum: ${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s; after it:`)
printSizes(await databaseSizes(client))
await client.end()
