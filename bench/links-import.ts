import { readFileSync } from 'node:fs'
import { admin, exchangeCodes, mintCodes, prepareParty } from './flow.js'
import { startBenchServer, startExampleApi } from './server.js'

/**
 * `npm run bench:import`: imports BENCH_IMPORT_ROWS (100,000) links into the links API from a
 * generic CSV file streamed as it is generated (one link in ten with a custom slug, tags, a title,
 * a created time, a click count and a UTM parameter), while another client reads a page of links
 * every 50 ms. Prints the upload's rows/s (reading and staging), the whole import's rows/s (until
 * the job is done), the reader's latency meanwhile, and the links API's peak RSS (VmHWM). Both
 * services run as their own processes on one fresh PostgreSQL database.
 */
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000)
const LINKS_PORT = 3403
const linksBase = `http://127.0.0.1:${LINKS_PORT}`
const resource = `${linksBase}/api`

function generatedCsv(rows: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let next = 0
  return new ReadableStream({
    pull(controller) {
      if (next === 0) controller.enqueue(encoder.encode('url,slug,tags,title,created_at,clicks,utm_source\n'))
      const end = Math.min(rows, next + 1000)
      let chunk = ''
      for (; next < end; next++) {
        const slug = next % 10 === 0 ? `bench-${next}` : ''
        chunk += `https://bench.example/item/${next},${slug},bulk;t${next % 7},Item ${next},2024-01-01T00:00:00Z,${next % 100},newsletter\n`
      }
      controller.enqueue(encoder.encode(chunk))
      if (next >= rows) controller.close()
    },
  })
}

const startLinksApi = (env: Record<string, string>) =>
  startExampleApi({ dir: 'links-api', prefix: 'LINKS', port: LINKS_PORT, env })

/** The peak resident set of a process (Linux: VmHWM in /proc), in MiB. */
function peakRssMiB(pid: number): string {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb ? (Number(kb) / 1024).toFixed(0) : 'n/a'
  } catch {
    return 'n/a'
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

const server = await startBenchServer({ env: { ACCESS_TOKEN_TTL: '3600', ACCESS_TOKEN_AUDIENCE: resource } })
try {
  const party = await prepareParty(server)
  const { id, secret } = await admin<{ id: string; secret: string }>(server, '/admin/resource-servers', {
    name: 'Links API (import bench)',
  })
  const { accessTokens } = await exchangeCodes(server, party, await mintCodes(server, party, 1))
  const token = accessTokens[0]!
  const links = await startLinksApi({
    LINKS_DATABASE_URL: server.databaseUrl,
    LINKAUTH_ISSUER: server.baseUrl,
    LINKS_RESOURCE_SERVER_ID: id,
    LINKS_RESOURCE_SERVER_SECRET: secret,
    LINKS_IMPORT_MAX_ROWS: String(Math.max(ROWS, 200_000)),
    LINKS_IMPORT_MAX_BYTES: String(1024 * 1024 * 1024),
  })
  const auth = { authorization: `Bearer ${token}` }
  try {
    const latencies: number[] = []
    let busy = true
    const reader = (async () => {
      while (busy) {
        const t0 = performance.now()
        const res = await fetch(`${linksBase}/api/links?limit=20`, { headers: auth })
        await res.arrayBuffer()
        latencies.push(performance.now() - t0)
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    const started = performance.now()
    const upload = await fetch(`${linksBase}/api/imports`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv' },
      body: generatedCsv(ROWS),
      duplex: 'half',
    } as RequestInit)
    const job = (await upload.json()) as { id: string; state: string }
    if (upload.status !== 202)
      throw new Error(`bench: the upload answered ${upload.status}: ${JSON.stringify(job)}`)
    const staged = (performance.now() - started) / 1000
    let final: Record<string, unknown>
    for (;;) {
      final = (await (await fetch(`${linksBase}/api/imports/${job.id}`, { headers: auth })).json()) as Record<
        string,
        unknown
      >
      if (final.state === 'done' || final.state === 'failed') break
      await new Promise((r) => setTimeout(r, 500))
    }
    const total = (performance.now() - started) / 1000
    busy = false
    await reader
    latencies.sort((a, b) => a - b)
    console.log(
      `links import of ${ROWS} rows (generic CSV, streamed), batch ${process.env.LINKS_IMPORT_BATCH_SIZE ?? 500}`,
    )
    console.log(
      `  job: ${String(final.state)}, created ${String(final.created)}, skipped ${String(final.skipped)}, conflicts ${String(final.conflicts)}, invalid ${String(final.invalid)}`,
    )
    console.log(
      `  upload (read, validate, stage): ${staged.toFixed(1)} s, ${Math.round(ROWS / staged)} rows/s`,
    )
    console.log(`  whole import (until done):      ${total.toFixed(1)} s, ${Math.round(ROWS / total)} rows/s`)
    console.log(
      `  a reader meanwhile (GET /api/links, ${latencies.length} requests): p50 ${percentile(latencies, 0.5).toFixed(0)} ms, p95 ${percentile(latencies, 0.95).toFixed(0)} ms, max ${(latencies.at(-1) ?? 0).toFixed(0)} ms`,
    )
    console.log(`  links API peak RSS: ${peakRssMiB(links.pid)} MiB`)
  } finally {
    await links.stop()
  }
} finally {
  await server.stop()
}
