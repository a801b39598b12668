import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resignedToken, waitFor } from '../../../test/helpers/resource.js'
import { type Answer, call, type ImportTestWorld, importTestWorld, LINKS_RESOURCE } from './import-setup.js'

/**
 * Importing links from another shortener, over real HTTP on real PostgreSQL: the formats, the dry
 * run, jobs and their reports, idempotency, resuming after an interruption, isolation, scopes and
 * bounds.
 */
let w: ImportTestWorld
let base: string
let app: FastifyInstance
let alice: string
beforeAll(async () => {
  w = await importTestWorld()
  ;({ app, base } = await w.startLinksApi({ imports: { batchSize: 50 } }))
  alice = await w.tokenFor(['links:read', 'links:write'])
})
afterAll(async () => w?.close())

const csv = (token: string, body: string, query = '') =>
  call(base, 'POST', `/api/imports${query}`, token, { body, type: 'text/csv' })
const jsonl = (token: string, body: string, query = '') =>
  call(base, 'POST', `/api/imports${query}`, token, { body, type: 'application/x-ndjson' })

/** Waits for the job to leave receiving/queued/running and returns it. */
async function finished(token: string, id: string, on = base): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const job = (await call(on, 'GET', `/api/imports/${id}`, token)).body
      return ['done', 'failed'].includes(String(job.state)) ? job : undefined
    },
    { timeoutMs: 30_000, intervalMs: 50, what: `import ${id}` },
  )
}

async function importAndWait(token: string, upload: () => Promise<Answer>) {
  const started = await upload()
  expect(started.status, started.text).toBe(202)
  return finished(token, String(started.body.id))
}

async function allLinks(token: string): Promise<Record<string, unknown>[]> {
  const links: Record<string, unknown>[] = []
  let cursor: unknown = null
  do {
    const page = await call(
      base,
      'GET',
      `/api/links?limit=100${cursor ? `&cursor=${String(cursor)}` : ''}`,
      token,
    )
    links.push(...(page.body.links as Record<string, unknown>[]))
    cursor = page.body.next_cursor
  } while (cursor)
  return links
}

const ownerLinkCount = async (ownerToken: string) => (await allLinks(ownerToken)).length

/** A Bitly export: the columns of its links export, a custom back-half, tags in one cell. */
const BITLY_SAMPLE = [
  'id,link,long_url,title,created_at,archived,tags,custom_bitlinks,clicks',
  'bit.ly/3xYzAb1,https://bit.ly/3xYzAb1,https://shop.example/spring?ref=bitly,Spring sale,2024-03-01T09:30:00+0000,false,"promo,spring",https://bit.ly/Spring-Sale-B1,1520',
  'bit.ly/3xYzAb2,https://bit.ly/3xYzAb2,https://blog.example/post/1,"A post, with a comma",2023-11-20T18:00:00+0000,true,,,"7"',
  'bit.ly/3xYzAb3,https://bit.ly/3xYzAb3,javascript:alert(1),Bad,2024-01-01T00:00:00+0000,false,,,0',
].join('\r\n')

describe('formats', () => {
  it('imports a Bitly export: long URL, custom back-half as slug, tags, title, created time, clicks', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const job = await importAndWait(token, () => csv(token, BITLY_SAMPLE))
    expect(job).toMatchObject({
      state: 'done',
      format: 'bitly',
      lines_read: 3,
      created: 1,
      skipped: 1,
      invalid: 1,
      conflicts: 0,
    })
    const links = await allLinks(token)
    const spring = links.find((l) => l.slug === 'Spring-Sale-B1')
    expect(spring).toMatchObject({
      target_url: 'https://shop.example/spring?ref=bitly',
      tags: ['promo', 'spring'],
      title: 'Spring sale',
      imported_clicks: 1520,
      clicks: 0,
      created_at: '2024-03-01T09:30:00.000Z',
    })
    // The archived Bitlink is not imported; the report says so on its line.
    expect(links.find((l) => l.target_url === 'https://blog.example/post/1')).toBeUndefined()
    // The short URL works at once.
    expect((await call(base, 'GET', '/Spring-Sale-B1', undefined)).headers.get('location')).toBe(
      'https://shop.example/spring?ref=bitly',
    )
    const report = await call(base, 'GET', `/api/imports/${String(job.id)}/report`, token)
    expect(report.body.problems).toEqual([
      { line: 3, kind: 'skipped', field: 'archived', reason: expect.stringMatching(/^an archived Bitlink/) },
      { line: 4, kind: 'invalid', field: 'long_url', reason: 'must be an http or https URL' },
    ])
  })

  it("reads Bitly's human headings too (Long URL, Custom Bitlink, Date Created, Total Clicks)", async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file =
      'Title,Long URL,Bitlink,Custom Bitlink,Date Created,Total Clicks,Tags\nDocs,https://docs.example/,bit.ly/abc,bit.ly/docs-h1,2024-02-01 10:00:00,12,docs\n'
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ format: 'bitly', created: 1 })
    expect((await allLinks(token))[0]).toMatchObject({
      slug: 'docs-h1',
      title: 'Docs',
      imported_clicks: 12,
      created_at: '2024-02-01T10:00:00.000Z',
      tags: ['docs'],
    })
  })

  it('imports the generic CSV with UTM parameters added to the target, and JSON Lines', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = [
      'url,slug,tags,title,created_at,clicks,utm_source,utm_medium,utm_campaign,utm_term,utm_content',
      'https://shop.example/a?x=1,gen-a1,promo;summer,Shoes,2024-05-01,3,newsletter,email,summer,,hero',
      'https://shop.example/b,,,,,,,,,,',
      'https://shop.example/c?utm_source=old,,,,,,new,,,,',
    ].join('\n')
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ format: 'csv', created: 3, invalid: 0 })
    const links = await allLinks(token)
    expect(links.find((l) => l.slug === 'gen-a1')).toMatchObject({
      target_url:
        'https://shop.example/a?x=1&utm_source=newsletter&utm_medium=email&utm_campaign=summer&utm_content=hero',
      tags: ['promo', 'summer'],
      title: 'Shoes',
      created_at: '2024-05-01T00:00:00.000Z',
      imported_clicks: 3,
    })
    expect(links.some((l) => l.target_url === 'https://shop.example/c?utm_source=new')).toBe(true)

    const lines = [
      JSON.stringify({
        url: 'https://j.example/1',
        slug: 'json-1x',
        tags: ['a', 'B'],
        clicks: 5,
        utm_campaign: 'spring',
      }),
      '',
      JSON.stringify({ url: 'https://j.example/2', title: 'Two', created_at: '2024-01-02T03:04:05Z' }),
      '{"url": "https://j.example/3", "colour": "red"}',
      'not json',
      '[1,2]',
    ].join('\n')
    const jobs = await importAndWait(token, () => jsonl(token, lines))
    expect(jobs).toMatchObject({ format: 'jsonl', lines_read: 5, created: 2, invalid: 3 })
    const report = await call(base, 'GET', `/api/imports/${String(jobs.id)}/report`, token)
    expect(report.body.problems).toEqual([
      { line: 4, kind: 'invalid', field: 'colour', reason: expect.stringMatching(/^unknown field/) },
      { line: 5, kind: 'invalid', field: 'line', reason: 'is not valid JSON' },
      { line: 6, kind: 'invalid', field: 'line', reason: 'must be a JSON object' },
    ])
    expect((await allLinks(token)).find((l) => l.slug === 'json-1x')).toMatchObject({
      target_url: 'https://j.example/1?utm_campaign=spring',
      tags: ['a', 'b'],
      imported_clicks: 5,
    })
  })
})

/** A body of raw bytes (a string would be sent as UTF-8). */
const bytesBody = (...parts: (string | number[])[]) => {
  const bytes = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))))
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes))
      controller.close()
    },
  })
}

describe('Bitly exports as people have them', () => {
  const HEADER = 'long_url,title,archived,tags,custom_bitlinks'

  it('a back-half with a space or a character slugs cannot have is invalid on its line, not cut short', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = [
      HEADER,
      'https://shop.example/summer,Summer,false,,https://bit.ly/summer sale!',
      'https://shop.example/ok,OK,false,,bit.ly/summer-ok-b1',
    ].join('\n')
    const dry = await csv(token, file, '?dry_run=true')
    expect(dry.body).toMatchObject({ would_create: 1, invalid: 1 })
    expect(dry.body.problems).toEqual([
      { line: 2, kind: 'invalid', field: 'slug', reason: expect.stringMatching(/^3 to 64 letters/) },
    ])
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ created: 1, invalid: 1 })
    expect((await allLinks(token)).map((l) => l.slug)).toEqual(['summer-ok-b1'])
  })

  it('keeps a tag of several words as one: "Spring Sale,promo" → spring-sale, promo', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = `${HEADER}\nhttps://shop.example/spring,Spring,false,"Spring Sale,promo",\n`
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ created: 1 })
    expect((await allLinks(token))[0]!.tags).toEqual(['spring-sale', 'promo'])
  })

  it('an archived Bitlink is skipped with a report line, in the dry run and the import alike', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file = [
      HEADER,
      'https://shop.example/old,Old,true,,',
      'https://shop.example/live,Live,false,,',
      'https://shop.example/older,Older,TRUE,,',
    ].join('\r\n')
    const dry = await csv(token, file, '?dry_run=true')
    expect(dry.body).toMatchObject({ lines_read: 3, would_create: 1, skipped: 2, invalid: 0 })
    expect((dry.body.problems as { line: number; kind: string }[]).map((p) => [p.line, p.kind])).toEqual([
      [2, 'skipped'],
      [4, 'skipped'],
    ])
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ created: 1, skipped: 2, invalid: 0 })
    expect((await allLinks(token)).map((l) => l.title)).toEqual(['Live'])
    const report = await call(base, 'GET', `/api/imports/${String(job.id)}/report`, token)
    expect((report.body.problems as { line: number; kind: string }[]).map((p) => [p.line, p.kind])).toEqual([
      [2, 'skipped'],
      [4, 'skipped'],
    ])
  })

  it('mixed line endings (\\r\\n, \\n, \\r): a short row is reported on its line, the next one imported', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const file =
      `${HEADER}\r\n` +
      'https://shop.example/short,Short\n' + // 2: too few fields, ended by \n after a \r\n header
      'https://shop.example/valid,Valid,false,,\r' + // 3: ended by a lone \r
      'https://shop.example/third,Third,false,,\r\n' + // 4
      'https://shop.example/fourth,Fourth,false,,' // 5: no line end
    const dry = await csv(token, file, '?dry_run=true')
    expect(dry.body).toMatchObject({ lines_read: 4, would_create: 3, invalid: 1 })
    expect(dry.body.problems).toEqual([
      { line: 2, kind: 'invalid', field: 'line', reason: 'has 2 fields; the header has 5' },
    ])
    const job = await importAndWait(token, () => csv(token, file))
    expect(job).toMatchObject({ created: 3, invalid: 1 })
    expect((await allLinks(token)).map((l) => l.title).sort()).toEqual(['Fourth', 'Third', 'Valid'])
  })
})

describe('what a file holds, byte for byte', () => {
  it('a line that is not UTF-8 is a row error naming its line, in CSV and JSON Lines; the rest is imported', async () => {
    const token = await w.tokenFor(['links:read', 'links:write'])
    const csvDry = await call(base, 'POST', '/api/imports?dry_run=true', token, {
      body: bytesBody(
        'url,title\n',
        'https://bytes.example/1,Caf',
        [0xe9], // Latin-1 é: not UTF-8
        '\r\nhttps://bytes.example/2,Caf\u00e9\n',
      ),
      type: 'text/csv',
    })
    expect(csvDry.body).toMatchObject({ lines_read: 2, would_create: 1, invalid: 1 })
    expect(csvDry.body.problems).toEqual([
      { line: 2, kind: 'invalid', field: 'line', reason: 'is not valid UTF-8' },
    ])
    const jsonlBody = () =>
      bytesBody(
        '{"url":"https://bytes.example/3"}\r',
        '{"url":"https://bytes.example/4","title":"',
        [0xc3, 0x28], // a broken two-byte sequence
        '"}\n\n{"url":"https://bytes.example/5","title":"Caf\u00e9"}',
      )
    const job = await importAndWait(token, () =>
      call(base, 'POST', '/api/imports', token, { body: jsonlBody(), type: 'application/x-ndjson' }),
    )
    expect(job).toMatchObject({ created: 2, invalid: 1 })
    const report = await call(base, 'GET', `/api/imports/${String(job.id)}/report`, token)
    expect(report.body.problems).toEqual([
      { line: 2, kind: 'invalid', field: 'line', reason: 'is not valid UTF-8' },
    ])
    const titles = (await allLinks(token)).map((l) => l.title)
    expect(titles).toContain('Café')
    expect(titles.join()).not.toContain('\uFFFD')
    // A header that is not UTF-8 refuses the file, naming its line.
    const header = await call(base, 'POST', '/api/imports?dry_run=true', token, {
      body: bytesBody('url,t', [0xff], 'tle\nhttps://bytes.example/6,x\n'),
      type: 'text/csv',
    })
    expect(header.status).toBe(400)
    expect(header.body).toMatchObject({ line: 1, field: 'header' })
  })
})

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

describe('scopes and bounds', () => {
  it('every import route needs links:write; a refused upload is not read', async () => {
    const reader = await w.tokenFor(['links:read'])
    for (const [method, path] of [
      ['POST', '/api/imports'],
      ['POST', '/api/imports?dry_run=true'],
      ['GET', '/api/imports'],
      ['GET', '/api/imports/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/imports/00000000-0000-4000-8000-000000000000/report'],
      ['POST', '/api/imports/00000000-0000-4000-8000-000000000000/resume'],
    ] as const) {
      const res = await call(
        base,
        method,
        path,
        reader,
        method === 'POST' ? { body: 'url\nhttps://x.example/', type: 'text/csv' } : {},
      )
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.headers.get('www-authenticate')).toContain('scope="links:write"')
      expect((await call(base, method, path, undefined)).status).toBe(401)
    }
    expect(((await call(base, 'GET', '/api/links', reader)).body.links as unknown[]).length).toBe(0)
  })

  it('a token for another API (its audience) is refused on the import routes; its control and a token listing this API accepted', async () => {
    const file = { body: 'url\nhttps://aud.example/', type: 'text/csv' }
    const control = resignedToken(w.server.t, alice, {})
    expect((await call(base, 'POST', '/api/imports?dry_run=true', control, file)).status).toBe(200)
    const res = await call(
      base,
      'POST',
      '/api/imports?dry_run=true',
      resignedToken(w.server.t, alice, { aud: 'https://commerce.example.com/api' }),
      file,
    )
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_token')
    // A token asked for without resource lists every API serving its scopes (RFC 9068 §4: aud contains).
    const listed = resignedToken(w.server.t, alice, {
      aud: [LINKS_RESOURCE, 'https://commerce.example.com/api'],
    })
    expect((await call(base, 'POST', '/api/imports?dry_run=true', listed, file)).status).toBe(200)
  })

  it('a JSON body is refused with 415 before it is read, however large; resume takes an empty JSON body', async () => {
    const big = JSON.stringify({ rows: 'x'.repeat(100_000) })
    const res = await call(base, 'POST', '/api/imports', alice, { body: big, type: 'application/json' })
    expect(res.status).toBe(415)
    expect(res.body.detail).toMatch(/^Send the file as text\/csv/)
    const job = await importAndWait(alice, () => csv(alice, 'url\nhttps://empty-body.example/\n'))
    await w.linksDb.db
      .updateTable('import_jobs')
      .set({ state: 'failed' })
      .where('id', '=', String(job.id))
      .execute()
    for (const body of ['', '{}']) {
      await w.linksDb.db
        .updateTable('import_jobs')
        .set({ state: 'failed' })
        .where('id', '=', String(job.id))
        .execute()
      const resumed = await call(base, 'POST', `/api/imports/${String(job.id)}/resume`, alice, {
        body,
        type: 'application/json',
      })
      expect(resumed.status, resumed.text).toBe(202)
      await app.importRunner.idle()
    }
  })

  it.each([
    ['application/json', '{"url":"https://x.example/"}', 415, undefined],
    ['text/plain', 'url\nhttps://x.example/', 415, undefined],
    ['text/csv', '', 400, undefined],
    ['text/csv', 'link,name\nhttps://x.example/,x', 400, 'header'],
    ['text/csv', 'url,colour\nhttps://x.example/,red', 400, 'header'],
    ['text/csv', 'url,slug\n"https://x.example/,abc', 400, undefined],
    ['text/csv', `url,title\nhttps://x.example/,${'x'.repeat(9000)}`, 400, undefined],
    ['application/x-ndjson', `{"url":"https://x.example/","title":"${'x'.repeat(9000)}"}`, 400, undefined],
  ] as const)(
    '%s, case %#: refused with a problem naming the field or line',
    async (type, body, status, field) => {
      const res = await call(base, 'POST', '/api/imports', alice, { body, type })
      expect(res.status, res.text).toBe(status)
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect(res.body).toMatchObject({ type: 'about:blank', status, error: 'invalid_request' })
      expect(typeof res.body.detail).toBe('string')
      if (field) expect(res.body.field).toBe(field)
      if (body.length > 8000) expect(res.body.line).toBe(type === 'text/csv' ? 2 : 1)
    },
  )

  it('a bad query parameter is named; nothing half-staged stays behind a refused upload', async () => {
    const bad = await csv(alice, 'url\nhttps://x.example/', '?dry_run=maybe')
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ field: 'dry_run', error: 'invalid_request' })
    const unknown = await csv(alice, 'url\nhttps://x.example/', '?format=x')
    expect(unknown.body.detail).toBe('unknown parameter: format')
    const before = await sql<{ n: number }>`select count(*)::int as n from links_api.import_jobs`.execute(
      w.linksDb.db,
    )
    const broken = await csv(alice, `url\nhttps://x.example/1\n${'"'}unclosed`)
    expect(broken.status).toBe(400)
    const after = await sql<{ n: number }>`select count(*)::int as n from links_api.import_jobs`.execute(
      w.linksDb.db,
    )
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n)
  })

  it('a file over the size or row bound is refused (413) and leaves no job', async () => {
    const small = await w.startLinksApi({ imports: { maxBytes: 2000, maxRows: 20 } })
    const token = await w.tokenFor(['links:read', 'links:write'])
    const big = ['url', ...Array.from({ length: 100 }, (_, i) => `https://big.example/${i}`)].join('\n')
    const tooBig = await call(small.base, 'POST', '/api/imports', token, { body: big, type: 'text/csv' })
    expect(tooBig.status).toBe(413)
    expect(tooBig.body.detail).toMatch(/larger than 2000 bytes/)
    const many = ['url', ...Array.from({ length: 21 }, (_, i) => `https://m.example/${i}`)].join('\n')
    const tooMany = await call(small.base, 'POST', '/api/imports?dry_run=true', token, {
      body: many,
      type: 'text/csv',
    })
    expect(tooMany.status).toBe(413)
    expect(tooMany.body).toMatchObject({
      line: 22,
      detail: 'line 22: more than 20 data lines; split the file',
    })
    // Blank lines count too: 25 of them and one row are over 20 data lines, in either format.
    const blank = `url\n${'\n'.repeat(25)}https://m.example/x\n`
    const blanks = await call(small.base, 'POST', '/api/imports?dry_run=true', token, {
      body: blank,
      type: 'text/csv',
    })
    expect(blanks.status).toBe(413)
    expect(blanks.body).toMatchObject({ line: 22 })
    const blankJson = await call(small.base, 'POST', '/api/imports?dry_run=true', token, {
      body: '\r\n'.repeat(21),
      type: 'application/x-ndjson',
    })
    expect(blankJson.status).toBe(413)
    expect(blankJson.body).toMatchObject({ line: 21 })
    const real = await call(small.base, 'POST', '/api/imports', token, { body: many, type: 'text/csv' })
    expect(real.status).toBe(413)
    expect((await call(small.base, 'GET', '/api/imports', token)).body.imports).toEqual([])
    expect(await ownerLinkCount(token)).toBe(0)
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
