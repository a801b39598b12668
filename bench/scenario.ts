import autocannon from 'autocannon'
import { benchDatabase, cpuPerRequest, peakRssMiB, resetPeakRss, sampleCpu, walBytes } from './cpu.js'

/** One measured scenario: requests per second, p50/p99 latency (ms), errors. */
export interface ScenarioRow {
  name: string
  rps: number
  p50: number
  p99: number
  errors: number
  /** Requests answered in the run. */
  requests?: number
  target?: number
  /**
   * Microseconds of CPU per request (when measured): the server, the PostgreSQL backends of its
   * database, the two together, the load generator.
   */
  cpu?: { server: number; postgres: number; serverAndPostgres: number; loadGenerator: number }
  /** Bytes of WAL PostgreSQL wrote per request (when measured). */
  walPerRequest?: number
  /** The server's peak resident memory during the scenario, MiB (its processes' VmHWM summed). */
  peakRssMiB?: number
}

export type ScenarioOptions = Parameters<typeof autocannon>[0]

/** BENCH_CONNECTIONS (64) and BENCH_SECONDS (10), shared by every bench script. */
export const benchSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
  duration: Number(process.env.BENCH_SECONDS ?? 10),
}

/** BENCH_REPEAT (1): how many times each scenario runs; above 1 its median row follows the runs. */
export const benchRepeat = Math.max(1, Number(process.env.BENCH_REPEAT ?? 1))

const NAME_WIDTH = 52
const COLUMNS: [string, number][] = [
  ['req/s', 8],
  ['p50 ms', 7],
  ['p99 ms', 7],
  ['errors', 7],
  ['server', 7],
  ['pg', 6],
  ['srv+pg', 7],
  ['load', 6],
  ['WAL B', 7],
  ['RSS MiB', 8],
]

export function printHeader(extra = ''): void {
  console.log(
    `connections=${benchSettings.connections} duration=${benchSettings.duration}s repeat=${benchRepeat} node=${process.version}${extra}`,
  )
  console.log(
    ''.padEnd(NAME_WIDTH),
    ''.padStart(8 + 7 + 7 + 7 + 3),
    ' CPU µs/request'.padEnd(7 + 6 + 7 + 6 + 3, ' '),
    ' per request; peak',
  )
  console.log('scenario'.padEnd(NAME_WIDTH), ...COLUMNS.map(([title, width]) => title.padStart(width)))
}

const shown = (value: number | undefined) => (value === undefined ? '–' : String(value))

/** Prints one row under printHeader's columns. */
export function printRow(row: ScenarioRow, name = row.name): void {
  const values = [
    row.rps,
    row.p50,
    row.p99,
    row.errors,
    row.cpu?.server,
    row.cpu?.postgres,
    row.cpu?.serverAndPostgres,
    row.cpu?.loadGenerator,
    row.walPerRequest,
    row.peakRssMiB,
  ]
  console.log(
    (name.length > NAME_WIDTH ? `${name.slice(0, NAME_WIDTH - 1)}…` : name).padEnd(NAME_WIDTH),
    ...values.map((v, i) => shown(v).padStart(COLUMNS[i]![1])),
    row.target ? ` target ≥ ${row.target}/s, p99 ≤ 50 ms` : '',
  )
}

/**
 * The median of a scenario's repeated runs, by server+PostgreSQL CPU per request (by req/s when CPU
 * was not measured): that run's row, whole, so its figures belong together.
 */
export function medianRow(rows: ScenarioRow[]): ScenarioRow {
  const key = (r: ScenarioRow) => r.cpu?.serverAndPostgres ?? -r.rps
  const sorted = [...rows].sort((x, y) => key(x) - key(y))
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

/**
 * Drives one scenario with autocannon and prints its row. An answer of another status class than
 * the scenario's success counts as an error.
 */
export async function runScenario(
  name: string,
  options: ScenarioOptions,
  target?: number,
  okClass: '2xx' | '3xx' | '4xx' = '2xx',
  serverPid?: number,
  databaseUrl?: string,
): Promise<ScenarioRow> {
  const { connections, duration } = benchSettings
  const database = databaseUrl ? await benchDatabase(databaseUrl) : undefined
  const walBefore = databaseUrl ? await walBytes(databaseUrl) : undefined
  if (serverPid) resetPeakRss(serverPid)
  const before = serverPid ? sampleCpu(serverPid, database) : undefined
  // Samples every 100 ms: a run of a fixed number of requests ends at the next sample, so its duration
  // (and the rate below) is then exact to a tenth of a second rather than rounded up to a second.
  const result = await autocannon({
    connections,
    sampleInt: 100,
    ...('amount' in options ? {} : { duration }),
    ...options,
  })
  const after = serverPid ? sampleCpu(serverPid, database) : undefined
  const peak = serverPid ? peakRssMiB(serverPid) : undefined
  const walAfter = databaseUrl ? await walBytes(databaseUrl) : undefined
  const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']
  const errors = result.errors + result.timeouts + (answered - result[okClass])
  const row: ScenarioRow = {
    name,
    // Answers over the run's measured duration (autocannon's own average is a mean of its samples).
    rps: Math.round(result.requests.total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
    requests: result.requests.total,
    target,
    cpu: before && after ? cpuPerRequest(before, after, result.requests.total) : undefined,
    walPerRequest:
      walBefore !== undefined && walAfter !== undefined && result.requests.total > 0
        ? Math.round((walAfter - walBefore) / result.requests.total)
        : undefined,
    peakRssMiB: peak,
  }
  printRow(row)
  return row
}
