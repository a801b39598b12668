import autocannon from 'autocannon'
import { cpuPerRequest, sampleCpu, walBytes } from './cpu.js'

/** One measured scenario: requests per second, p50/p99 latency (ms), errors. */
export interface ScenarioRow {
  name: string
  rps: number
  p50: number
  p99: number
  errors: number
  target?: number
  /** Microseconds of CPU per request: the server, PostgreSQL, the load generator (when measured). */
  cpu?: { server: number; postgres: number; loadGenerator: number }
  /** Bytes of WAL PostgreSQL wrote per request (when measured). */
  walPerRequest?: number
}

export type ScenarioOptions = Parameters<typeof autocannon>[0]

/** BENCH_CONNECTIONS (64) and BENCH_SECONDS (10), shared by every bench script. */
export const benchSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 64),
  duration: Number(process.env.BENCH_SECONDS ?? 10),
}

export function printHeader(extra = ''): void {
  console.log(
    `connections=${benchSettings.connections} duration=${benchSettings.duration}s node=${process.version}${extra}`,
  )
  console.log(
    'scenario'.padEnd(44),
    'req/s'.padStart(8),
    'p50 ms'.padStart(7),
    'p99 ms'.padStart(7),
    'errors'.padStart(7),
    '  CPU µs/request: server pg load; WAL bytes/request',
  )
}

/**
 * Drives one scenario with autocannon and prints its row. An answer of another status class than
 * the scenario's success counts as an error.
 */
export async function runScenario(
  name: string,
  options: ScenarioOptions,
  target?: number,
  okClass: '2xx' | '3xx' = '2xx',
  serverPid?: number,
  databaseUrl?: string,
): Promise<ScenarioRow> {
  const { connections, duration } = benchSettings
  const walBefore = databaseUrl ? await walBytes(databaseUrl) : undefined
  const before = serverPid ? sampleCpu(serverPid) : undefined
  // Samples every 100 ms: a run of a fixed number of requests ends at the next sample, so its duration
  // (and the rate below) is then exact to a tenth of a second rather than rounded up to a second.
  const result = await autocannon({
    connections,
    sampleInt: 100,
    ...('amount' in options ? {} : { duration }),
    ...options,
  })
  const after = serverPid ? sampleCpu(serverPid) : undefined
  const walAfter = databaseUrl ? await walBytes(databaseUrl) : undefined
  const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx']
  const errors = result.errors + result.timeouts + (answered - result[okClass])
  const row = {
    name,
    // Answers over the run's measured duration (autocannon's own average is a mean of its samples).
    rps: Math.round(result.requests.total / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors,
    target,
    cpu: before && after ? cpuPerRequest(before, after, result.requests.total) : undefined,
    walPerRequest:
      walBefore !== undefined && walAfter !== undefined && result.requests.total > 0
        ? Math.round((walAfter - walBefore) / result.requests.total)
        : undefined,
  }
  console.log(
    name.padEnd(44),
    String(row.rps).padStart(8),
    String(row.p50).padStart(7),
    String(row.p99).padStart(7),
    String(row.errors).padStart(7),
    row.cpu ? `  ${row.cpu.server} ${row.cpu.postgres} ${row.cpu.loadGenerator}` : '',
    row.walPerRequest !== undefined ? `; ${row.walPerRequest}` : '',
    target ? `  target ≥ ${target}/s, p99 ≤ 50 ms` : '',
  )
  return row
}
