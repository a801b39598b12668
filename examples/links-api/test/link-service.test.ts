import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidRequestError, LinkNotFoundError, SlugTakenError } from '../src/errors.js'
import { linkInputSchemas, type NewLink } from '../src/links/link-input.js'
import { createLinkService, type LinkService } from '../src/links/link.service.js'
import { RANDOM_SLUG_LENGTH, SLUG_PATTERN } from '../src/links/slug.js'
import { parseInput } from '../src/web/parse.js'
import { createTestClock, type TestClock } from '../../../test/helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import { createLinksTestDatabase, type LinksTestDatabase } from './links-database.js'

const PUBLIC_URL = 'https://sho.rt'
const schemas = linkInputSchemas(PUBLIC_URL)

let database: TestDatabase
let links: LinksTestDatabase
let clock: TestClock
let service: LinkService
beforeAll(async () => {
  database = await createTestDatabase()
  links = await createLinksTestDatabase(database)
  clock = createTestClock(new Date('2026-03-10T12:00:00Z'))
  service = createLinkService({ db: links.db, clock })
})
afterAll(async () => {
  await links.close()
  await database.close()
})

const newLink = (input: Record<string, unknown>): NewLink => parseInput(schemas.newLink, input)
const create = (owner: string, input: Record<string, unknown>) => service.createLink(owner, newLink(input))
/** The description of the 400 a value earns, or 'accepted'. */
function problemWith(schema: keyof typeof schemas, input: unknown): string {
  try {
    parseInput(schemas[schema], input)
    return 'accepted'
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError)
    return (err as InvalidRequestError).description
  }
}

describe('creating a link', () => {
  it('gives a random slug when none is asked for, and keeps tags lower-cased and unique', async () => {
    const owner = randomUUID()
    const link = await create(owner, { target_url: 'https://example.com/a', tags: ['Promo', 'promo', ' x '] })
    expect(link.slug).toHaveLength(RANDOM_SLUG_LENGTH)
    expect(link.slug).toMatch(SLUG_PATTERN)
    expect(link.tags).toEqual(['promo', 'x'])
    expect(link.clicks).toBe(0)
    expect(link.createdAt).toEqual(clock.now())
    const other = await create(owner, { target_url: 'https://example.com/a' })
    expect(other.slug).not.toBe(link.slug)
  })

  it('takes a custom slug once, whatever its case, across users', async () => {
    const slug = `Launch-${randomUUID().slice(0, 8)}`
    await create(randomUUID(), { target_url: 'https://example.com/', slug })
    await expect(create(randomUUID(), { target_url: 'https://example.com/', slug })).rejects.toBeInstanceOf(
      SlugTakenError,
    )
    await expect(
      create(randomUUID(), { target_url: 'https://example.com/', slug: slug.toLowerCase() }),
    ).rejects.toThrow(/is taken/)
  })

  it('refuses reserved words and slugs outside the pattern', () => {
    const target = 'https://example.com/'
    expect(problemWith('newLink', { target_url: target, slug: 'api' })).toBe(
      'slug: "api" is reserved; choose another slug',
    )
    expect(problemWith('newLink', { target_url: target, slug: 'HealthZ' })).toMatch(/reserved/)
    for (const slug of ['ab', '-abc', 'abc-', 'a b c', 'émoji', 'x'.repeat(65), 'a/b', 'a.b', ''])
      expect(problemWith('newLink', { target_url: target, slug }), slug).toMatch(/^slug: 3 to 64 letters/)
    expect(problemWith('newLink', { target_url: target, slug: 'my_link-2' })).toBe('accepted')
    expect(problemWith('newLink', { target_url: target, slug: 42 })).toBe('slug: must be a string')
  })

  it('accepts only absolute http(s) targets without credentials, within the length limit', () => {
    const problem = (target_url: unknown) => problemWith('newLink', { target_url })
    expect(problem('https://example.com/path?q=1#top')).toBe('accepted')
    expect(problem('http://127.0.0.1:8080/x')).toBe('accepted')
    expect(problem(undefined)).toBe('target_url: is required')
    expect(problem('javascript:alert(1)')).toBe('target_url: must be an http or https URL')
    expect(problem('data:text/html,<script>alert(1)</script>')).toBe(
      'target_url: must be an http or https URL',
    )
    expect(problem('ftp://example.com/file')).toBe('target_url: must be an http or https URL')
    expect(problem('/relative/path')).toMatch(/must be an absolute URL/)
    expect(problem('example.com')).toMatch(/must be an absolute URL/)
    expect(problem('https:example.com')).toMatch(/must be an absolute URL/)
    expect(problem('https://user:pass@example.com/')).toBe(
      'target_url: must not contain a user name or password',
    )
    expect(problem('https://bank.example@evil.example/')).toBe(
      'target_url: must not contain a user name or password',
    )
    expect(problem(' https://example.com/')).toBe('target_url: must not contain spaces or control characters')
    expect(problem('https://example.com/\nx')).toBe(
      'target_url: must not contain spaces or control characters',
    )
    expect(problem(`https://example.com/${'a'.repeat(2048)}`)).toBe('target_url: at most 2048 characters')
    expect(problem('https://sho.rt/abc')).toBe('target_url: must not point at this short-link service')
    expect(problem(['https://example.com/'])).toBe('target_url: must be a string')
  })

  it('counts every loopback name of this machine as its own origin when it is served on loopback', () => {
    const local = linkInputSchemas('http://localhost:3102')
    const problem = (target_url: string) => {
      try {
        parseInput(local.newLink, { target_url })
        return 'accepted'
      } catch (err) {
        return (err as InvalidRequestError).description
      }
    }
    const own = 'target_url: must not point at this short-link service'
    for (const host of ['localhost', '127.0.0.1', '127.1', '127.9.9.9', '[::1]', 'LOCALHOST.', 'a.localhost'])
      expect(problem(`http://${host}:3102/x`), host).toBe(own)
    for (const target of ['http://127.0.0.1:3103/x', 'https://127.0.0.1:3102/x', 'http://10.0.0.1:3102/x'])
      expect(problem(target), target).toBe('accepted')
    // A public host is compared exactly, as before: another name is another origin.
    expect(problemWith('newLink', { target_url: 'https://www.sho.rt/x' })).toBe('accepted')
  })

  it('stores the target in its normalised form (punycode host, percent-encoded path)', async () => {
    const link = await create(randomUUID(), { target_url: 'https://bücher.example/straße?q=ä' })
    expect(link.targetUrl).toBe('https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%A4')
  })

  it('refuses unknown fields, too many tags and bad tags', () => {
    expect(problemWith('newLink', { target_url: 'https://e.example/', owner: 'x' })).toBe(
      'unknown parameter: owner',
    )
    expect(problemWith('newLink', [])).toBe('the body must be a JSON object')
    expect(problemWith('newLink', undefined)).toBe('the body must be a JSON object')
    const tags = Array.from({ length: 11 }, (_, i) => `t${i}`)
    expect(problemWith('newLink', { target_url: 'https://e.example/', tags })).toBe('tags: at most 10 tags')
    expect(problemWith('newLink', { target_url: 'https://e.example/', tags: ['ok', 'no spaces'] })).toMatch(
      /^tags\.1: 1 to 32 letters/,
    )
    expect(problemWith('newLink', { target_url: 'https://e.example/', tags: 'promo' })).toBe(
      'tags: must be a list of tags',
    )
  })
})

describe("one user's links are invisible to everyone else", () => {
  it('reading, changing, deleting or counting another user\'s link is "not found"', async () => {
    const alice = randomUUID()
    const link = await create(alice, { target_url: 'https://alice.example/' })
    const mallory = randomUUID()
    const changes = parseInput(schemas.linkChanges, { target_url: 'https://mallory.example/' })
    await expect(service.getLink(mallory, link.id)).rejects.toBeInstanceOf(LinkNotFoundError)
    await expect(service.updateLink(mallory, link.id, changes)).rejects.toBeInstanceOf(LinkNotFoundError)
    await expect(service.deleteLink(mallory, link.id)).rejects.toBeInstanceOf(LinkNotFoundError)
    await expect(service.linkStats(mallory, link.id, {})).rejects.toBeInstanceOf(LinkNotFoundError)
    expect((await service.listLinks(mallory, { limit: 100 })).links).toEqual([])
    expect(await service.listTags(mallory)).toEqual([])
    expect((await service.getLink(alice, link.id)).targetUrl).toBe('https://alice.example/')
  })

  it('an id that is not a UUID names no link (no query, no 500)', async () => {
    const owner = randomUUID()
    for (const id of ['', 'abc', "1' or '1'='1", '00000000-0000-0000-0000-00000000000g'])
      await expect(service.getLink(owner, id)).rejects.toBeInstanceOf(LinkNotFoundError)
  })
})

describe('changing and deleting', () => {
  it('changes target and tags, moves updated_at, and deletes with the click counts', async () => {
    const owner = randomUUID()
    const link = await create(owner, { target_url: 'https://before.example/', tags: ['a'] })
    clock.advance(60)
    const changed = await service.updateLink(
      owner,
      link.id,
      parseInput(schemas.linkChanges, { target_url: 'https://after.example/', tags: ['B', 'c'] }),
    )
    expect(changed).toMatchObject({ targetUrl: 'https://after.example/', tags: ['b', 'c'], slug: link.slug })
    expect(changed.updatedAt.getTime() - changed.createdAt.getTime()).toBe(60_000)
    const tagsOnly = await service.updateLink(owner, link.id, parseInput(schemas.linkChanges, { tags: [] }))
    expect(tagsOnly).toMatchObject({ targetUrl: 'https://after.example/', tags: [] })

    await service.resolveSlug(link.slug, { count: true })
    await service.deleteLink(owner, link.id)
    await expect(service.getLink(owner, link.id)).rejects.toBeInstanceOf(LinkNotFoundError)
    await expect(service.deleteLink(owner, link.id)).rejects.toBeInstanceOf(LinkNotFoundError)
    expect(await service.resolveSlug(link.slug, { count: true })).toBeUndefined()
    const left = await links.db
      .selectFrom('link_daily_clicks')
      .select('clicks')
      .where('link_id', '=', link.id)
      .execute()
    expect(left).toEqual([])
  })

  it('needs something to change, and never the slug', () => {
    expect(problemWith('linkChanges', {})).toBe('name target_url or tags to change')
    expect(problemWith('linkChanges', { slug: 'other' })).toBe('unknown parameter: slug')
    expect(problemWith('linkChanges', { target_url: 'mailto:a@b.example' })).toBe(
      'target_url: must be an http or https URL',
    )
  })
})

describe('listing', () => {
  it('pages newest first with a cursor, filters by tag, and counts tags', async () => {
    const owner = randomUUID()
    const made = []
    for (let i = 0; i < 5; i++)
      made.push(
        await create(owner, {
          target_url: `https://e.example/${i}`,
          tags: i % 2 ? ['odd'] : ['even', 'all'],
        }),
      )
    const newestFirst = made.map((l) => l.id).reverse()

    const seen: string[] = []
    let cursor: string | undefined
    const sizes: number[] = []
    do {
      const query = parseInput(schemas.listQuery, { limit: '2', ...(cursor ? { cursor } : {}) })
      const page = await service.listLinks(owner, query)
      sizes.push(page.links.length)
      seen.push(...page.links.map((l) => l.id))
      cursor = page.nextCursor
    } while (cursor)
    expect(sizes).toEqual([2, 2, 1])
    expect(seen).toEqual(newestFirst)

    const odd = await service.listLinks(owner, parseInput(schemas.listQuery, { tag: 'ODD' }))
    expect(odd.links.map((l) => l.targetUrl)).toEqual(['https://e.example/3', 'https://e.example/1'])
    expect(odd.nextCursor).toBeUndefined()
    expect(await service.listTags(owner)).toEqual([
      { tag: 'all', links: 3 },
      { tag: 'even', links: 3 },
      { tag: 'odd', links: 2 },
    ])
  })

  it('searches slug, target URL and title for a text, any case, wildcards taken literally', async () => {
    const owner = randomUUID()
    const tag = randomUUID().slice(0, 8)
    const spring = await create(owner, { target_url: 'https://shop.example/Spring-Sale', slug: `s-${tag}` })
    const percent = await create(owner, { target_url: 'https://shop.example/100%25-off', slug: `p-${tag}` })
    const under = await create(owner, {
      target_url: 'https://shop.example/a_b',
      slug: `u-${tag}`,
      tags: ['x'],
    })
    const titled = await create(owner, { target_url: 'https://blog.example/post' })
    // Titles come with imported links; this one is given its title directly.
    await sql`update links_api.links set title = ${'Summer SALE notes'} where id = ${titled.id}`.execute(
      links.db,
    )
    // Another user's link matches the text and is never found.
    await create(randomUUID(), { target_url: 'https://shop.example/spring-sale-elsewhere' })
    const search = async (q: string, more: Record<string, string> = {}) =>
      (await service.listLinks(owner, parseInput(schemas.listQuery, { q, ...more }))).links.map((l) => l.id)

    expect(await search('SALE')).toEqual([titled.id, spring.id])
    expect(await search(`  p-${tag.toUpperCase()} `)).toEqual([percent.id])
    // %, _ and \ are characters to find, not wildcards: "%" alone matches only the link that has one.
    expect(await search('%')).toEqual([percent.id])
    expect(await search('_')).toEqual([under.id])
    expect(await search('a_b')).toEqual([under.id])
    expect(await search('\\')).toEqual([])
    expect(await search("' or 1=1 --")).toEqual([])
    // With a tag, and paged: the same keyset as the plain list.
    expect(await search('shop.example', { tag: 'x' })).toEqual([under.id])
    const first = await service.listLinks(owner, parseInput(schemas.listQuery, { q: 'shop', limit: '2' }))
    expect(first.links.map((l) => l.id)).toEqual([under.id, percent.id])
    const rest = await service.listLinks(
      owner,
      parseInput(schemas.listQuery, { q: 'shop', limit: '2', cursor: first.nextCursor }),
    )
    expect(rest.links.map((l) => l.id)).toEqual([spring.id])
    expect(rest.nextCursor).toBeUndefined()
  })

  it('bounds the search text', () => {
    expect(parseInput(schemas.listQuery, { q: ' sale ' })).toEqual({ q: 'sale', limit: 20 })
    expect(problemWith('listQuery', { q: '   ' })).toBe('q: must not be empty')
    expect(problemWith('listQuery', { q: 'x'.repeat(101) })).toBe('q: at most 100 characters')
    expect(problemWith('listQuery', { q: ['a', 'b'] })).toMatch(/^q: /)
  })

  it('bounds the page size and refuses cursors it did not make', () => {
    expect(parseInput(schemas.listQuery, {})).toEqual({ limit: 20 })
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '1e2'])
      expect(problemWith('listQuery', { limit }), limit).toMatch(/^limit: must be/)
    expect(problemWith('listQuery', { cursor: 'not-a-cursor' })).toMatch(/^cursor: is not a cursor/)
    expect(problemWith('listQuery', { cursor: 'x'.repeat(65) })).toMatch(/^cursor: is not a cursor/)
    expect(problemWith('listQuery', { tag: ['a', 'b'] })).toMatch(/^tag: /)
    expect(problemWith('listQuery', { tags: 'a' })).toBe('unknown parameter: tags')
  })
})

describe('clicks and statistics', () => {
  it('counts each click on its UTC day and reports a zero-filled range with totals', async () => {
    const owner = randomUUID()
    const link = await create(owner, { target_url: 'https://stats.example/' })
    clock.set(new Date('2026-03-01T23:59:59Z'))
    expect(await service.resolveSlug(link.slug, { count: true })).toBe('https://stats.example/')
    clock.set(new Date('2026-03-03T00:00:00Z'))
    await service.resolveSlug(link.slug.toUpperCase(), { count: true })
    await service.resolveSlug(link.slug, { count: true })
    await service.resolveSlug(link.slug, { count: false }) // a HEAD: answered, not counted

    const stats = await service.linkStats(owner, link.id, { from: '2026-02-28', to: '2026-03-03' })
    expect(stats).toEqual({
      linkId: link.id,
      from: '2026-02-28',
      to: '2026-03-03',
      totalClicks: 3,
      clicksInRange: 3,
      days: [
        { date: '2026-02-28', clicks: 0 },
        { date: '2026-03-01', clicks: 1 },
        { date: '2026-03-02', clicks: 0 },
        { date: '2026-03-03', clicks: 2 },
      ],
    })
    const narrow = await service.linkStats(owner, link.id, { from: '2026-03-02', to: '2026-03-02' })
    expect(narrow).toMatchObject({
      totalClicks: 3,
      clicksInRange: 0,
      days: [{ date: '2026-03-02', clicks: 0 }],
    })
    // By default the last 30 days up to today.
    const recent = await service.linkStats(owner, link.id, {})
    expect(recent).toMatchObject({ from: '2026-02-02', to: '2026-03-03', clicksInRange: 3 })
    expect(recent.days).toHaveLength(30)
    expect((await service.getLink(owner, link.id)).clicks).toBe(3)
  })

  it('loses no click when many arrive at once', async () => {
    const link = await create(randomUUID(), { target_url: 'https://busy.example/' })
    await Promise.all(Array.from({ length: 40 }, () => service.resolveSlug(link.slug, { count: true })))
    const rows = await links.db
      .selectFrom('link_daily_clicks')
      .select('clicks')
      .where('link_id', '=', link.id)
      .execute()
    expect(rows.map((r) => Number(r.clicks))).toEqual([40])
    expect((await service.listLinks(randomUUID(), { limit: 1 })).links).toEqual([])
  })

  it('answers unknown and impossible slugs with nothing', async () => {
    expect(await service.resolveSlug('nosuchslug', { count: true })).toBeUndefined()
    expect(await service.resolveSlug('../etc/passwd', { count: true })).toBeUndefined()
    expect(await service.resolveSlug('x'.repeat(300), { count: true })).toBeUndefined()
  })

  it('refuses ranges that are backwards, too long or not dates', async () => {
    const owner = randomUUID()
    const link = await create(owner, { target_url: 'https://range.example/' })
    const stats = (query: Record<string, string>) =>
      service.linkStats(owner, link.id, parseInput(schemas.statsQuery, query))
    await expect(stats({ from: '2026-03-05', to: '2026-03-04' })).rejects.toThrow(
      'from: must not be after to',
    )
    await expect(stats({ from: '2024-01-01', to: '2026-01-01' })).rejects.toThrow(
      'to: at most 366 days after from',
    )
    expect((await stats({ from: '2025-03-01', to: '2026-03-01' })).days).toHaveLength(366)
    expect(problemWith('statsQuery', { from: '2026-02-30' })).toBe('from: must be a real calendar date')
    expect(problemWith('statsQuery', { to: 'yesterday' })).toBe('to: must be a date as YYYY-MM-DD')
  })
})
