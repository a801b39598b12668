import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resignedToken } from '../../../test/helpers/resource.js'
import { call, importCalls, type ImportTestWorld, LINKS_RESOURCE, startImportFile } from './import-setup.js'

/**
 * The import routes' scopes and bounds over real HTTP: links:write, the token's audience, media
 * types, parameters, size and row limits.
 */
let w: ImportTestWorld
let base: string
let app: FastifyInstance
let alice: string
beforeAll(async () => {
  ;({ w, base, app, alice } = await startImportFile())
})
afterAll(async () => w?.close())
const { csv, importAndWait, ownerLinkCount } = importCalls(() => base)

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
