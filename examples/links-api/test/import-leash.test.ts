import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { apiCall } from '../../../test/helpers/api-call.js'
import type { AppLimits } from '../../shared/app-leash.js'
import { importCalls } from './import-setup.js'
import { partyOfKind, tokenOf } from './leash-parties.js'
import { linksBase, linksDb, useMcpServices } from './mcp-services.js'

/**
 * Issue 37 part 4, the leash on imports: every link an import creates counts against the same
 * budget as single creates (per person, per application, by standing). An import with more valid
 * rows than remain this hour is refused up front with the leash's 429 (Retry-After, JSON) and
 * leaves no job and no link; one that fits is counted whole when queued, and the rows that make no
 * link (duplicates) are given back as it runs. Verified applications are not held.
 */

const LIMITS: AppLimits = { unverified: 3, vouched: 5, verified: null }

let now = new Date('2026-03-01T12:10:00Z')
useMcpServices({ appLimits: LIMITS, clock: { now: () => now } })

const { csv, finished, importAndWait, ownerLinkCount } = importCalls(() => linksBase)

let file = 0
/** A CSV of `n` new links (each file its own URLs, unless `urls` are given). */
const rows = (n: number, urls = Array.from({ length: n }, (_, i) => `https://leash${++file}.example/${i}`)) =>
  ['url', ...urls].join('\n') + '\n'

const create = (token: string) =>
  apiCall(linksBase, 'POST', '/api/links', token, { json: { target_url: 'https://example.com/' } })

const jobCount = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from links_api.import_jobs`.execute(linksDb.db))
    .rows[0]!.n

describe('POST /api/imports under the leash', () => {
  it('an unverified app: an import with more rows than its limit is refused up front, no job, no link', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    const jobsBefore = await jobCount()
    const refused = await csv(token, rows(40))
    expect(refused.status, refused.text).toBe(429)
    // 12:10 in a fixed hour window: the count starts again at 13:00.
    expect(refused.headers.get('retry-after')).toBe(String(50 * 60))
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(refused.body).toMatchObject({
      status: 429,
      error: 'app_limit_reached',
      retry_after: 3000,
      retry_at: '2026-03-01T13:00:00.000Z',
      limit: 3,
      remaining: 3,
      window_seconds: 3600,
      client_standing: 'unverified',
    })
    expect(String(refused.body.error_description)).toMatch(
      /unverified.*at most 3 new links an hour.*3 remain this hour; this import has more than 3 new rows/,
    )
    expect(await jobCount()).toBe(jobsBefore)
    expect(await ownerLinkCount(token)).toBe(0)
  })

  it('an import that fits is counted whole: the single creates after it are refused', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    const job = await importAndWait(token, () => csv(token, rows(3)))
    expect(job).toMatchObject({ state: 'done', created: 3 })
    const refused = await create(token)
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ error: 'app_limit_reached', limit: 3 })
    // Nothing remains: the next import is refused before a byte of it is staged.
    const again = await csv(token, rows(1))
    expect(again.status).toBe(429)
    expect(String(again.body.error_description)).toMatch(/has made them this hour/)
    expect(await ownerLinkCount(token)).toBe(3)
  })

  it('single creates first: an import with more rows than remain is refused, naming what remains', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    for (let i = 0; i < 2; i++) expect((await create(token)).status).toBe(201)
    const refused = await csv(token, rows(2))
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ remaining: 1, limit: 3 })
    expect(String(refused.body.error_description)).toMatch(/1 remains this hour/)
    expect((await importAndWait(token, () => csv(token, rows(1)))).created).toBe(1)
    expect(await ownerLinkCount(token)).toBe(3)
  })

  it('invalid lines do not count; rows that make no link (duplicates) are given back as the import runs', async () => {
    const token = await tokenOf(await partyOfKind('metadata_document'))
    const urls = ['https://dup.example/a', 'https://dup.example/b']
    expect((await importAndWait(token, () => csv(token, rows(2, urls)))).created).toBe(2)
    // 2 links made of 5: the same two again, one new, and two invalid lines: 3 counted up front.
    const second = await importAndWait(token, () =>
      csv(token, rows(5, [...urls, 'https://dup.example/c', 'not a url', 'ftp://x.example/'])),
    )
    expect(second).toMatchObject({ state: 'done', created: 1, invalid: 2 })
    // 3 made: 2 remain (without the give-back, none would).
    for (let i = 0; i < 2; i++) expect((await create(token)).status).toBe(201)
    expect((await create(token)).status).toBe(429)
  })

  it('a vouched app: a file larger than its hourly limit is told to be split', async () => {
    const token = await tokenOf(await partyOfKind('metadata_document'))
    const refused = await csv(token, rows(6))
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ limit: 5, client_standing: 'vouched' })
    expect(String(refused.body.error_description)).toMatch(
      /more than 5 new rows\. Split it into files of at most 5 rows/,
    )
    expect((await importAndWait(token, () => csv(token, rows(5)))).created).toBe(5)
  })

  it('two concurrent imports that each fit but not together: exactly one is accepted', async () => {
    for (let round = 0; round < 3; round++) {
      const token = await tokenOf(await partyOfKind('dynamic'))
      const answers = await Promise.all([csv(token, rows(2)), csv(token, rows(2))])
      expect(answers.map((a) => a.status).sort()).toEqual([202, 429])
      const accepted = answers.find((a) => a.status === 202)!
      expect((await finished(token, String(accepted.body.id))).created).toBe(2)
      expect(await ownerLinkCount(token)).toBe(2)
    }
  })

  it('verified apps (registered, or verified by the operator) import without the leash', async () => {
    for (const party of [await partyOfKind('registered'), await partyOfKind('dynamic', 'verified')]) {
      const token = await tokenOf(party)
      expect((await importAndWait(token, () => csv(token, rows(40)))).created).toBe(40)
      expect((await create(token)).status).toBe(201)
      const counted = await linksDb.db
        .selectFrom('app_write_counts')
        .select('count')
        .where('client_id', '=', party.client.id)
        .execute()
      expect(counted).toEqual([])
    }
  })

  it('a registered app whose standing the operator took away is held like any unverified one', async () => {
    const token = await tokenOf(await partyOfKind('registered', 'unverified'))
    expect((await csv(token, rows(4))).status).toBe(429)
  })

  it('a dry run counts nothing', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    const dry = await csv(token, rows(3), '?dry_run=true')
    expect(dry.status).toBe(200)
    expect(dry.body.would_create).toBe(3)
    expect((await importAndWait(token, () => csv(token, rows(3)))).created).toBe(3)
  })

  it('a new hour starts the count again for imports too', async () => {
    const token = await tokenOf(await partyOfKind('dynamic'))
    expect((await importAndWait(token, () => csv(token, rows(3)))).created).toBe(3)
    expect((await csv(token, rows(1))).status).toBe(429)
    const before = now
    now = new Date('2026-03-01T13:00:01Z')
    try {
      expect((await importAndWait(token, () => csv(token, rows(3)))).created).toBe(3)
    } finally {
      now = before
    }
  })
})
