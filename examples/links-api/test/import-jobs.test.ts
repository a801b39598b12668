import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../../../test/helpers/resource.js'
import { call, importCalls, type ImportTestWorld, startImportFile } from './import-setup.js'

/**
 * Import jobs over real HTTP on real PostgreSQL: the dry run, reports, idempotency, resuming after an
 * interruption (a failed batch, a dying instance, an upload cut short), isolation between users.
 */
let w: ImportTestWorld
let base: string
let app: FastifyInstance
beforeAll(async () => {
  ;({ w, base, app } = await startImportFile())
})
afterAll(async () => w?.close())
const { csv, finished, importAndWait, allLinks, ownerLinkCount } = importCalls(() => base)

describe('the dry run', () => {
  it('reports what would be created, conflicts (yours, another user’s, earlier line), skipped and invalid lines, writing nothing', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const bob = await w.tokenFor(['links:read', 'links:write'])
    const mine = await call(base, 'POST', '/api/links', token, {
      body: JSON.stringify({ target_url: 'https://mine.example/', slug: 'dry-mine' }),
      type: 'application/json',
    })
    expect(mine.status).toBe(201)
    expect(
      (
        await call(base, 'POST', '/api/links', bob, {
          body: JSON.stringify({ target_url: 'https://bob.example/', slug: 'dry-bobs' }),
          type: 'application/json',
        })
      ).status,
    ).toBe(201)
    // Imported once already: the same row is skipped, not created twice.
    await importAndWait(token, () => csv(token, 'url,slug\nhttps://once.example/,dry-once\n'))
    const before = await ownerLinkCount(token)

    const file = [
      'url,slug,tags,created_at,clicks',
      'https://new.example/1,dry-new1,,,', // 2: would be created
      'https://new.example/2,DRY-MINE,,,', // 3: taken by you (any case)
      'https://new.example/3,dry-bobs,,,', // 4: taken by another user
      'https://new.example/4,dry-new1,,,', // 5: earlier line
      'https://once.example/,dry-once,,,', // 6: already imported → skipped
      'ftp://x.example/,,,,', // 7: invalid url
      'https://new.example/5,a b,,,', // 8: invalid slug
      'https://new.example/6,,bad tag!,,', // 9: invalid tag
      'https://new.example/7,,,2024-02-31,', // 10: invalid date
      'https://new.example/8,,,,-1', // 11: invalid clicks
      'https://new.example/9,,,', // 12: too few fields
      'https://new.example/10,,,,', // 13: would be created
    ].join('\n')
    const dry = await csv(token, file, '?dry_run=true')
    expect(dry.status, dry.text).toBe(200)
    expect(dry.body).toMatchObject({
      dry_run: true,
      format: 'csv',
      lines_read: 12,
      would_create: 2,
      skipped: 1,
      conflicts: 3,
      invalid: 6,
      problems_truncated: false,
    })
    const problems = dry.body.problems as { line: number; kind: string; field: string; reason: string }[]
    expect(problems.map((p) => [p.line, p.kind, p.field])).toEqual([
      [3, 'conflict', 'slug'],
      [4, 'conflict', 'slug'],
      [5, 'conflict', 'slug'],
      [7, 'invalid', 'url'],
      [8, 'invalid', 'slug'],
      [9, 'invalid', 'tags'],
      [10, 'invalid', 'created_at'],
      [11, 'invalid', 'clicks'],
      [12, 'invalid', 'line'],
    ])
    expect(problems[0]!.reason).toBe('the slug "DRY-MINE" is taken by another of your links')
    expect(problems[1]!.reason).toBe('the slug "dry-bobs" is taken by another user')
    expect(problems[2]!.reason).toBe('the slug "dry-new1" is used by an earlier line of this file')
    expect(problems[8]!.reason).toBe('has 4 fields; the header has 5')
    // Whose slug it is never shows: no user id in the answer.
    expect(dry.text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
    // Nothing written, no job made.
    expect(await ownerLinkCount(token)).toBe(before)
    expect(((await call(base, 'GET', '/api/imports', token)).body.imports as unknown[]).length).toBe(1)

    // The import itself agrees with the dry run.
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({
      state: 'done',
      lines_read: 12,
      created: 2,
      skipped: 1,
      conflicts: 3,
      invalid: 6,
    })
    const report = await call(base, 'GET', `/api/imports/${String(job.id)}/report`, token)
    expect((report.body.problems as { line: number }[]).map((p) => p.line)).toEqual([
      3, 4, 5, 7, 8, 9, 10, 11, 12,
    ])
    expect(await ownerLinkCount(token)).toBe(before + 2)
  })
})

describe('jobs', () => {
  it('re-running the same file creates nothing twice', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const rows = Array.from({ length: 120 }, (_, i) =>
      i % 3 === 0
        ? `https://idem.example/${i},idem-${i},t${i % 5},Title ${i},,`
        : `https://idem.example/${i},,t${i % 5},Title ${i},,${i}`,
    )
    const file = ['url,slug,tags,title,created_at,clicks', ...rows].join('\n')
    const first = await importAndWait(token, () => csv(token, file))
    expect(first).toMatchObject({ state: 'done', created: 120, skipped: 0 })
    const second = await importAndWait(token, () => csv(token, file))
    expect(second).toMatchObject({ state: 'done', created: 0, skipped: 120, conflicts: 0 })
    expect(await ownerLinkCount(token)).toBe(120)
    const listed = (await call(base, 'GET', '/api/imports', token)).body.imports as { id: string }[]
    expect(listed.map((j) => j.id)).toEqual([String(second.id), String(first.id)])
  })

  it('a batch that fails writes nothing of itself; the job is resumable and finishes without duplicates', async () => {
    let failAt: number | undefined = 3
    const crashing = await w.startLinksApi({
      imports: { batchSize: 40 },
      beforeImportBatchCommit: (_job, batch) => {
        if (batch === failAt) throw new Error('simulated failure before commit')
      },
    })
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = [
      'url,tags',
      ...Array.from({ length: 200 }, (_, i) => `https://crash.example/${i},crash`),
    ].join('\n')
    const started = await call(crashing.base, 'POST', '/api/imports', token, { body: file, type: 'text/csv' })
    expect(started.status).toBe(202)
    const id = String(started.body.id)
    const failed = await finished(token, id, crashing.base)
    // Two batches committed; the third rolled back whole: no link of it, no tag of it.
    expect(failed).toMatchObject({ state: 'failed', created: 80, lines_read: 200 })
    expect(String(failed.error)).toMatch(/Resume the import/)
    expect(await ownerLinkCount(token)).toBe(80)

    failAt = undefined
    const resumed = await call(crashing.base, 'POST', `/api/imports/${id}/resume`, token)
    expect(resumed.status).toBe(202)
    expect(resumed.body.state).toBe('queued')
    const done = await finished(token, id, crashing.base)
    expect(done).toMatchObject({ state: 'done', created: 200, skipped: 0 })
    const links = await allLinks(token)
    expect(links).toHaveLength(200)
    expect(new Set(links.map((l) => l.target_url)).size).toBe(200)
    expect(links.every((l) => (l.tags as string[]).includes('crash'))).toBe(true)
    const again = await call(crashing.base, 'POST', `/api/imports/${id}/resume`, token)
    expect(again.status).toBe(409)
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/)
  })

  it('an instance that dies mid-job leaves it to the next one, which resumes after the last committed batch', async () => {
    const dying: Awaited<ReturnType<ImportTestWorld['startLinksApi']>> = await w.startLinksApi({
      imports: { batchSize: 30, leaseSeconds: 1 },
      beforeImportBatchCommit: (_job, batch) => {
        if (batch === 4) {
          // As if the process were killed: the runner stops, the open transaction never commits.
          void dying.app.importRunner.stop()
          throw new Error('killed')
        }
      },
    })
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = ['url', ...Array.from({ length: 300 }, (_, i) => `https://kill.example/${i}`)].join('\n')
    const started = await call(dying.base, 'POST', '/api/imports', token, { body: file, type: 'text/csv' })
    expect(started.status).toBe(202)
    const id = String(started.body.id)
    await dying.app.importRunner.idle()
    const stalled = (await call(base, 'GET', `/api/imports/${id}`, token)).body
    expect(stalled).toMatchObject({ state: 'running', created: 90 })
    expect(await ownerLinkCount(token)).toBe(90)
    await dying.app.close()

    // The next instance takes the job once its lease has expired.
    const next = await w.startLinksApi({ imports: { batchSize: 30, leaseSeconds: 1 } })
    const done = await finished(token, id, next.base)
    expect(done).toMatchObject({ state: 'done', created: 300 })
    expect(await ownerLinkCount(token)).toBe(300)
  })

  it("users see only their own imports: another user's is 404, as one that does not exist", async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const bob = await w.tokenFor(['links:write'])
    const job = await importAndWait(token, () => csv(token, 'url\nhttps://iso.example/\n'))
    for (const [method, path] of [
      ['GET', `/api/imports/${String(job.id)}`],
      ['GET', `/api/imports/${String(job.id)}/report`],
      ['POST', `/api/imports/${String(job.id)}/resume`],
      ['GET', '/api/imports/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/imports/not-a-uuid'],
    ] as const) {
      const res = await call(base, method, path, bob)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toMatchObject({ status: 404, detail: 'No import with this id.', error: 'not_found' })
    }
    expect((await call(base, 'GET', '/api/imports', bob)).body.imports).toEqual([])
  })
})

it('a client that goes away mid-upload leaves no job and no link behind', async () => {
  const token = await w.tokenFor(['links:read', 'links:write'])
  const encoder = new TextEncoder()
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 0) controller.enqueue(encoder.encode('url\n'))
      if (sent >= 3000) {
        // The upload stops half-way: the connection goes away.
        controller.error(new Error('client gone'))
        return
      }
      let chunk = ''
      for (let i = 0; i < 1000; i++) chunk += `https://gone.example/${sent++}\n`
      controller.enqueue(encoder.encode(chunk))
      await new Promise((r) => setTimeout(r, 50))
    },
  })
  await expect(call(base, 'POST', '/api/imports', token, { body, type: 'text/csv' })).rejects.toThrow()
  await waitFor(
    async () => ((await call(base, 'GET', '/api/imports', token)).body.imports as unknown[]).length === 0,
    { what: 'the abandoned job to go' },
  )
  // It stays gone, and nothing of the file became a link.
  await new Promise((r) => setTimeout(r, 300))
  expect((await call(base, 'GET', '/api/imports', token)).body.imports).toEqual([])
  expect(await ownerLinkCount(token)).toBe(0)
  const staged = await sql<{ n: number }>`select count(*)::int as n from links_api.import_rows`.execute(
    w.linksDb.db,
  )
  expect(staged.rows[0]!.n).toBe(0)
})

it('an upload whose instance died mid-file is marked incomplete, and cannot be resumed', async () => {
  const token = await w.tokenFor(['links:read', 'links:write'])
  const sub = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string
  const stale = await w.linksDb.db
    .insertInto('import_jobs')
    .values({
      owner_id: sub,
      format: 'csv',
      state: 'receiving',
      updated_at: new Date(Date.now() - 11 * 60_000),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  const receiving = await call(base, 'POST', `/api/imports/${stale.id}/resume`, token)
  expect(receiving.status).toBe(409)
  expect(receiving.body.detail).toBe('This import is still receiving its file.')
  // The runner's next look for work (here: woken by another import) settles it.
  await importAndWait(token, () => csv(token, 'url\nhttps://other.example/\n'))
  const job = (await call(base, 'GET', `/api/imports/${stale.id}`, token)).body
  expect(job).toMatchObject({
    state: 'incomplete',
    error: 'The upload was interrupted; upload the file again.',
  })
  const resume = await call(base, 'POST', `/api/imports/${stale.id}/resume`, token)
  expect(resume.status).toBe(409)
  expect(resume.body.detail).toBe('The upload of this import was interrupted; upload the file again.')
})

it('the app stops its runner on close (no timer left behind)', async () => {
  const extra = await w.startLinksApi()
  await extra.app.close()
  await expect(extra.app.importRunner.idle()).resolves.toBeUndefined()
  expect(app.importRunner).toBeDefined()
})
