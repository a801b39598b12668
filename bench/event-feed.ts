import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { exchangeCodes, mintCodes, prepareParty } from './flow.js'
import { startBenchServer } from './server.js'

/**
 * `npm run bench:events`: revocation-to-delivery latency of the revocation event feed, against the
 * production build on PostgreSQL. Pollers hold long polls over HTTP (as verifiers do, one stream
 * each); the bench revokes one access token at a time and times its SET's arrival on every stream:
 *   - from the COMMIT of a revocation made in another process (a direct INSERT on its own
 *     connection: the NOTIFY crosses processes) to the SET's arrival;
 *   - from sending POST /api/oauth/revoke (RFC 7009) to the SET's arrival (end to end).
 * Settings: BENCH_REVOCATIONS (200), BENCH_STREAMS (comma-separated stream counts, "1,50").
 */
const revocations = Number(process.env.BENCH_REVOCATIONS ?? 200)
const streamCounts = (process.env.BENCH_STREAMS ?? '1,50').split(',').map(Number)

interface Poller {
  /** performance.now() when the SET of each revoked access-token jti arrived. */
  arrived: Map<string, number>
  stop(): void
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** The revoked jti a SET names (read, not verified: the tests verify SETs; here only time counts). */
function revokedJti(set: string): string | undefined {
  const claims = JSON.parse(Buffer.from(set.split('.')[1]!, 'base64url').toString()) as {
    events: Record<string, { jti?: string }>
  }
  return Object.values(claims.events)[0]?.jti
}

const server = await startBenchServer({ port: 3420, adminPort: 3421, database: 'linkauth_bench_events' })
const sql = new pg.Client({ connectionString: server.databaseUrl })
await sql.connect()
try {
  const rs = (await (
    await fetch(`${server.adminUrl}/admin/resource-servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench verifier' }),
    })
  ).json()) as { id: string; secret: string }
  const basic = `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`
  const party = await prepareParty(server)
  const tokens = await exchangeCodes(
    server,
    party,
    await mintCodes(server, party, revocations * streamCounts.length),
  )

  /** A verifier instance: its own stream, long-polling and acknowledging in a loop. */
  async function startPoller(): Promise<Poller> {
    const created = await fetch(`${server.baseUrl}/api/events/streams`, {
      method: 'POST',
      headers: { authorization: basic },
    })
    const { poll_endpoint: endpoint } = (await created.json()) as { poll_endpoint: string }
    const arrived = new Map<string, number>()
    let running = true
    const stopping = new AbortController()
    void (async () => {
      let ack: string[] = []
      while (running) {
        try {
          const res = await fetch(endpoint, {
            method: 'POST',
            headers: { authorization: basic, 'content-type': 'application/json' },
            body: JSON.stringify({ ack, maxEvents: 1000 }),
            signal: stopping.signal,
          })
          const body = (await res.json()) as { sets: Record<string, string> }
          const at = performance.now()
          ack = Object.keys(body.sets)
          for (const set of Object.values(body.sets)) {
            const jti = revokedJti(set)
            if (jti && !arrived.has(jti)) arrived.set(jti, at)
          }
        } catch {
          if (running) await pause(50)
        }
      }
    })()
    return {
      arrived,
      stop: () => {
        running = false
        stopping.abort()
      },
    }
  }

  console.log(`revocations=${revocations} node=${process.version} (one at a time, 20 ms apart)`)
  console.log('scenario'.padEnd(58), 'streams', 'samples', '  p50 ms', '  p99 ms', '  max ms')
  const report = (name: string, streams: number, samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b)
    const ms = (v: number) => v.toFixed(2).padStart(8)
    console.log(
      name.padEnd(58),
      String(streams).padStart(7),
      String(sorted.length).padStart(7),
      ms(percentile(sorted, 50)),
      ms(percentile(sorted, 99)),
      ms(sorted[sorted.length - 1]!),
    )
  }

  /** Waits until every poller has the jti; returns the arrival times. */
  async function delivered(pollers: Poller[], jti: string): Promise<number[]> {
    const deadline = performance.now() + 30_000
    while (pollers.some((p) => !p.arrived.has(jti))) {
      if (performance.now() > deadline) throw new Error(`bench: ${jti} not delivered within 30 s`)
      await pause(1)
    }
    return pollers.map((p) => p.arrived.get(jti)!)
  }

  let nextToken = 0
  for (const count of streamCounts) {
    const pollers = await Promise.all(Array.from({ length: count }, startPoller))
    await pause(500) // every poller holding its first poll
    const fromCommit: number[] = []
    const firstFromCommit: number[] = []
    for (let i = 0; i < revocations; i++) {
      const jti = randomUUID()
      await sql.query(
        "insert into revoked_access_tokens (jti, expires_at) values ($1, now() + interval '10 minutes')",
        [jti],
      )
      const committed = performance.now()
      const arrivals = (await delivered(pollers, jti)).map((at) => at - committed)
      fromCommit.push(...arrivals)
      firstFromCommit.push(Math.min(...arrivals))
      await pause(20)
    }
    report('commit (another process) → SET received', count, fromCommit)
    if (count > 1) report('commit (another process) → SET received, first stream', count, firstFromCommit)

    const fromRequest: number[] = []
    const batch = tokens.accessTokens.slice(nextToken, nextToken + revocations)
    nextToken += batch.length
    for (const token of batch) {
      const jti = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string })
        .jti
      const sent = performance.now()
      const res = await fetch(`${server.baseUrl}/api/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: party.clientId }).toString(),
      })
      if (!res.ok) throw new Error(`bench: revoke answered ${res.status}`)
      for (const at of await delivered(pollers, jti)) fromRequest.push(at - sent)
      await pause(20)
    }
    report('POST /api/oauth/revoke sent → SET received', count, fromRequest)
    for (const p of pollers) p.stop()
  }
} finally {
  await sql.end()
  await server.stop()
}
