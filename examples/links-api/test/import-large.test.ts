import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { waitFor } from '../../../test/helpers/resource.js'
import { call, type ImportTestWorld, importTestWorld } from './import-setup.js'

/**
 * A large file, streamed to the API as it is generated (neither side ever holds it whole): the
 * import completes, every row becomes one link, and requests made meanwhile are answered between
 * its batches (the runner yields between batches: what the code guarantees, whatever the machine's
 * speed; their latencies are printed, not asserted). 10,000 rows in the suite (the 100,000 of the issue take 80 s on a loaded
 * two-core machine: IMPORT_TEST_ROWS=100000 runs them here); `npm run bench:import` measures
 * 100,000 with rows/s and peak memory.
 */
const ROWS = Number(process.env.IMPORT_TEST_ROWS ?? 10_000)

let w: ImportTestWorld
beforeAll(async () => {
  w = await importTestWorld()
})
afterAll(async () => w?.close())

/** The generic CSV, `rows` lines, produced chunk by chunk as the request body is read. */
function generatedCsv(rows: number, prefix: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let next = 0
  return new ReadableStream({
    pull(controller) {
      if (next === 0) controller.enqueue(encoder.encode('url,slug,tags,title,created_at,clicks,utm_source\n'))
      const end = Math.min(rows, next + 1000)
      let chunk = ''
      for (; next < end; next++) {
        const slug = next % 10 === 0 ? `${prefix}-${next}` : ''
        chunk += `https://big.example/${prefix}/${next},${slug},bulk;t${next % 7},Item ${next},2024-01-01T00:00:00Z,${next % 100},newsletter\n`
      }
      controller.enqueue(encoder.encode(chunk))
      if (next >= rows) controller.close()
    },
  })
}

it(`imports ${ROWS} rows without blocking other requests`, { timeout: 300_000 }, async () => {
  // Batches committed so far, counted inside each batch's transaction.
  let committed = 0
  const { base } = await w.startLinksApi({
    beforeImportBatchCommit: () => {
      committed++
    },
  })
  const token = await w.tokenFor(['links:read', 'links:write'])
  const prefix = randomUUID().slice(0, 8)

  // Meanwhile, another client reads, one request after another: for each answer, how many batches
  // had committed when it came, and how long it took.
  const answeredAfter: number[] = []
  const latencies: number[] = []
  let busy = true
  const prober = (async () => {
    while (busy) {
      const started = performance.now()
      const res = await call(base, 'GET', '/api/links?limit=1', token)
      latencies.push(performance.now() - started)
      answeredAfter.push(committed)
      expect(res.status).toBe(200)
      await new Promise((r) => setTimeout(r, 5))
    }
  })()

  const started = performance.now()
  const upload = await call(base, 'POST', '/api/imports', token, {
    body: generatedCsv(ROWS, prefix),
    type: 'text/csv',
  })
  expect(upload.status, upload.text).toBe(202)
  const id = String(upload.body.id)
  const job = await waitFor(
    async () => {
      const res = (await call(base, 'GET', `/api/imports/${id}`, token)).body
      return res.state === 'done' || res.state === 'failed' ? res : undefined
    },
    { timeoutMs: 200_000, intervalMs: 250, what: 'the import' },
  )
  const seconds = (performance.now() - started) / 1000
  busy = false
  await prober

  expect(job).toMatchObject({
    state: 'done',
    lines_read: ROWS,
    created: ROWS,
    skipped: 0,
    conflicts: 0,
    invalid: 0,
  })
  const count = await w.linksDb.db
    .selectFrom('links')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('import_key', 'is not', null)
    .where('target_url', 'like', `https://big.example/${prefix}/%`)
    .executeTakeFirstOrThrow()
  expect(Number(count.n)).toBe(ROWS)

  // One transaction per batch of 500 (the default), and other requests answered between them: a
  // runner that held the event loop (or the database) for the whole import would answer none there.
  const batches = Math.ceil(ROWS / 500)
  expect(committed).toBe(batches)
  const between = answeredAfter.filter((n) => n >= 1 && n < batches)
  expect(between.length, `answers after each batch: ${answeredAfter.join(',')}`).toBeGreaterThan(0)

  latencies.sort((a, b) => a - b)
  const p95 = latencies[Math.floor(latencies.length * 0.95)]!
  console.log(
    `imported ${ROWS} rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)} rows/s); ` +
      `${latencies.length} concurrent requests (${between.length} between batches): ` +
      `p95 ${p95.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms`,
  )
})
