import autocannon from 'autocannon'
import { startBenchServer } from './server.js'

/**
 * `npm run bench`: load scenarios against the production build on PostgreSQL on this machine.
 * Each prints requests per second, p50/p99 latency and errors. Settings: BENCH_CONNECTIONS (64),
 * BENCH_SECONDS (10).
 */
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const duration = Number(process.env.BENCH_SECONDS ?? 10)

interface Scenario {
  name: string
  path: string
  method?: 'GET' | 'POST'
}

const scenarios: Scenario[] = [
  { name: 'liveness (GET /healthz)', path: '/healthz' },
  { name: 'readiness (GET /readyz, one database round trip)', path: '/readyz' },
]

const server = await startBenchServer()
try {
  console.log(`connections=${connections} duration=${duration}s node=${process.version}`)
  console.log(
    'scenario'.padEnd(52),
    'req/s'.padStart(9),
    'p50 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'errors'.padStart(7),
  )
  for (const s of scenarios) {
    const result = await autocannon({
      url: server.baseUrl + s.path,
      method: s.method ?? 'GET',
      connections,
      duration,
    })
    const errors = result.errors + result.timeouts + result.non2xx
    console.log(
      s.name.padEnd(52),
      result.requests.average.toFixed(0).padStart(9),
      String(result.latency.p50).padStart(8),
      String(result.latency.p99).padStart(8),
      String(errors).padStart(7),
    )
  }
} finally {
  await server.stop()
}
