import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import {
  exchangeCodes,
  introspectionRequest,
  mintCodes,
  prepareParty,
  refreshChainRequest,
  registerResourceServer,
} from './flow.js'
import { startBenchServer } from './server.js'

/**
 * `npm run bench:memory`: the server's resident memory over BENCH_MEMORY_REQUESTS (1,000,000) requests
 * of a mixed scenario (metadata, JWKS, authorize with remembered consent, refresh rotation,
 * introspection of access and refresh tokens), sampled
 * every 5 s. Flat means: after warm-up, growth stays under the bound printed at the end.
 */
const total = Number(process.env.BENCH_MEMORY_REQUESTS ?? 1_000_000)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const BOUND_MIB = 32

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
}

const server = await startBenchServer({ env: { WORKERS: '1' } })
try {
  const party = await prepareParty(server)
  const seeds = await exchangeCodes(server, party, await mintCodes(server, party, connections * 2))
  const introspected = await exchangeCodes(server, party, await mintCodes(server, party, 200))
  const basic = await registerResourceServer(server)
  const samples: { requests: number; rss: number }[] = []
  let done = 0
  const started = Date.now()
  samples.push({ requests: 0, rss: rssMiB(server.pid) })
  const timer = setInterval(() => {
    samples.push({ requests: done, rss: rssMiB(server.pid) })
    const last = samples.at(-1)!
    console.log(`${String(last.requests).padStart(9)} requests  rss ${last.rss.toFixed(1)} MiB`)
  }, 5_000)
  const options: autocannon.Options = {
    url: server.baseUrl,
    connections,
    amount: total,
    requests: [
      { method: 'GET', path: '/.well-known/oauth-authorization-server' },
      { method: 'GET', path: '/.well-known/jwks.json' },
      { method: 'GET', path: party.authorizePath, headers: { cookie: party.cookie } },
      refreshChainRequest(party, seeds.refreshTokens),
      introspectionRequest(basic, introspected.accessTokens),
      introspectionRequest(basic, introspected.refreshTokens),
    ],
  }
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err, res) => (err ? reject(err) : resolve(res)))
    instance.on('response', () => done++)
  })
  clearInterval(timer)
  const warm = samples.find((s) => s.requests >= total * 0.1) ?? samples[0]!
  const end = rssMiB(server.pid)
  const peak = Math.max(...samples.map((s) => s.rss), end)
  const errors = result.errors + result.timeouts + result['4xx'] + result['5xx']
  if (process.env.BENCH_DEBUG) console.log(result)
  console.log(
    `${total} requests in ${((Date.now() - started) / 1000).toFixed(0)} s, errors ${errors}; rss after warm-up ${warm.rss.toFixed(1)} MiB, at the end ${end.toFixed(1)} MiB, peak ${peak.toFixed(1)} MiB`,
  )
  const growth = end - warm.rss
  console.log(
    growth <= BOUND_MIB
      ? `flat: grew ${growth.toFixed(1)} MiB after warm-up (bound ${BOUND_MIB} MiB)`
      : `GREW ${growth.toFixed(1)} MiB after warm-up (bound ${BOUND_MIB} MiB)`,
  )
} finally {
  await server.stop()
}
