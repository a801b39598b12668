import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, importCalls, type ImportTestWorld, startImportFile } from './import-setup.js'

/**
 * Importing links from another shortener, over real HTTP on real PostgreSQL: the formats (Bitly's
 * export as people have it, the generic CSV, JSON Lines) and what a file holds byte for byte.
 */
let w: ImportTestWorld
let base: string
beforeAll(async () => {
  ;({ w, base } = await startImportFile())
})
afterAll(async () => w?.close())
const { csv, jsonl, importAndWait, allLinks } = importCalls(() => base)

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
