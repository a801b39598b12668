import { describe, expect, it } from 'vitest'
import {
  csvFormatOf,
  genericHeaderProblem,
  type ImportRow,
  parseCreatedAt,
  rowFrom,
  type RowProblem,
} from '../src/imports/import-row.js'

/** The rules of one imported row, format by format (no database: the HTTP tests cover the rest). */
const OWN = 'https://sho.rt'
const generic = (record: Record<string, unknown>) => rowFrom('csv', record, OWN)
const problemOf = (row: ImportRow | RowProblem) =>
  'reason' in row ? `${row.field}: ${row.reason}` : 'accepted'

describe('headers', () => {
  it('tells a Bitly export from the generic CSV, whatever the case and spacing of its headings', () => {
    expect(csvFormatOf(['id', 'link', 'long_url', 'title'])).toBe('bitly')
    expect(csvFormatOf(['Title', 'Long URL', 'Bitlink'])).toBe('bitly')
    expect(csvFormatOf(['URL', 'Slug'])).toBe('csv')
    expect(csvFormatOf(['link', 'name'])).toBeUndefined()
    expect(genericHeaderProblem(['url', 'Slug', 'UTM Source'])).toBeUndefined()
    expect(genericHeaderProblem(['url', 'colour'])).toMatch(/^unknown column "colour"/)
    expect(genericHeaderProblem(['url', 'slug', 'SLUG'])).toBe('column "slug" appears twice')
  })
})

describe('created times', () => {
  it.each([
    ['2024-03-01T09:30:00Z', '2024-03-01T09:30:00.000Z'],
    ['2024-03-01T09:30:00+0000', '2024-03-01T09:30:00.000Z'],
    ['2024-03-01T11:30:00+02:00', '2024-03-01T09:30:00.000Z'],
    ['2024-03-01 09:30:00', '2024-03-01T09:30:00.000Z'],
    ['2024-03-01', '2024-03-01T00:00:00.000Z'],
    ['1709285400', '2024-03-01T09:30:00.000Z'],
    ['2024-02-31', undefined],
    ['03/01/2024', undefined],
    ['yesterday', undefined],
    ['2999-01-01', undefined],
    ['1970-01-01', undefined],
  ])('%s → %s', (input, expected) => {
    expect(parseCreatedAt(input)).toBe(expected)
  })
})

describe('rows', () => {
  it('normalises the target, adds UTM parameters, keeps the slug, lower-cases and dedupes tags', () => {
    const row = generic({
      url: 'https://Shop.Example/a b?x=1'.replace(' ', '%20'),
      slug: 'Summer-1',
      tags: 'Promo, promo;SUMMER',
      utm_source: 'news letter',
    }) as ImportRow
    expect(row).toMatchObject({
      slug: 'Summer-1',
      targetUrl: 'https://shop.example/a%20b?x=1&utm_source=news%20letter',
      tags: ['promo', 'summer'],
      title: null,
      createdAt: null,
      clicks: 0,
    })
  })

  it('the import key ignores tags and clicks, and tells rows with and without slugs apart', () => {
    const a = generic({ url: 'https://e.example/', tags: 'a', clicks: '1' }) as ImportRow
    const b = generic({ url: 'https://e.example/', tags: 'b', clicks: '99' }) as ImportRow
    const titled = generic({ url: 'https://e.example/', title: 'T' }) as ImportRow
    const slugged = generic({ url: 'https://e.example/', slug: 'abc' }) as ImportRow
    const sameSlugOtherCase = generic({ url: 'https://e.example/', slug: 'ABC', title: 'x' }) as ImportRow
    expect(a.key).toBe(b.key)
    expect(titled.key).not.toBe(a.key)
    expect(slugged.key).not.toBe(a.key)
    expect(sameSlugOtherCase.key).toBe(slugged.key)
  })

  it.each([
    [{ url: '' }, 'url: is required'],
    [{ url: 'https://sho.rt/x' }, 'url: must not point at this short-link service'],
    [{ url: 'https://e.example/', slug: 'api' }, 'slug: "api" is reserved; choose another slug'],
    [
      { url: 'https://e.example/', tags: Array.from({ length: 11 }, (_, i) => `t${i}`).join(',') },
      'tags: at most 10 tags',
    ],
    [{ url: 'https://e.example/', title: 'x'.repeat(301) }, 'title: at most 300 characters'],
    [{ url: 'https://e.example/', title: 'a\u0000b' }, 'title: must not contain control characters'],
    [{ url: 'https://e.example/', clicks: '1.5' }, /^clicks: must be a whole number/],
    [{ url: 'https://e.example/', clicks: '99999999999999' }, /^clicks: must be a whole number/],
    [{ url: 'https://e.example/', utm_campaign: 'x'.repeat(201) }, 'utm_campaign: at most 200 characters'],
    [
      { url: `https://e.example/${'a'.repeat(2030)}`, utm_source: 'abcdefghijklmnopqrstuvwxyz' },
      /^url: at most 2048 characters/,
    ],
  ])('%j → %s', (record, expected) => {
    const problem = problemOf(generic(record))
    if (typeof expected === 'string') expect(problem).toBe(expected)
    else expect(problem).toMatch(expected)
  })

  it('reads a Bitly row: the first custom back-half is the slug, other columns are ignored', () => {
    const row = rowFrom(
      'bitly',
      {
        id: 'bit.ly/3abc',
        long_url: 'https://e.example/p',
        custom_bitlinks: 'https://bit.ly/My-Page, https://brand.ly/other',
        archived: 'false',
        total_clicks: '12',
      },
      OWN,
    ) as ImportRow
    expect(row).toMatchObject({ slug: 'My-Page', clicks: 12, targetUrl: 'https://e.example/p' })
    // A back-half our slugs cannot be (too short here) makes the line invalid rather than be dropped.
    expect(
      problemOf(rowFrom('bitly', { long_url: 'https://e.example/', custom_bitlinks: 'bit.ly/ab' }, OWN)),
    ).toMatch(/^slug: 3 to 64/)
    expect(problemOf(rowFrom('bitly', { long_url: 'nope' }, OWN))).toMatch(/^long_url: /)
  })

  it('a custom back-half our slugs cannot be is invalid whole, never cut short at a space', () => {
    const bitly = (custom_bitlinks: string) =>
      problemOf(rowFrom('bitly', { long_url: 'https://e.example/', custom_bitlinks }, OWN))
    for (const cell of ['https://bit.ly/summer sale!', 'bit.ly/summer sale!', 'summer sale!', 'bit.ly/sale!'])
      expect(bitly(cell), cell).toMatch(/^slug: 3 to 64 letters/)
    // Several Bitlinks in one cell, by separator or by spaces between short URLs: the first is kept.
    const slugOf = (custom_bitlinks: string) =>
      (rowFrom('bitly', { long_url: 'https://e.example/', custom_bitlinks }, OWN) as ImportRow).slug
    expect(slugOf('bit.ly/first-one bit.ly/second')).toBe('first-one')
    expect(slugOf('bit.ly/first-one;brand.ly/second')).toBe('first-one')
    expect(slugOf('spring-sale')).toBe('spring-sale')
  })

  it('keeps a tag of several words as one (Spring Sale → spring-sale), in every format', () => {
    const bitly = rowFrom(
      'bitly',
      { long_url: 'https://e.example/', tags: 'Spring Sale,promo;  Black  Friday ' },
      OWN,
    ) as ImportRow
    expect(bitly.tags).toEqual(['spring-sale', 'promo', 'black-friday'])
    expect((generic({ url: 'https://e.example/', tags: 'Spring Sale|promo' }) as ImportRow).tags).toEqual([
      'spring-sale',
      'promo',
    ])
    expect(problemOf(generic({ url: 'https://e.example/', tags: '50% off' }))).toMatch(/^tags: "50%-off": /)
  })

  it('skips an archived Bitlink with a reason, whatever the case of its flag', () => {
    for (const archived of ['true', 'TRUE', 'yes', '1'])
      expect(rowFrom('bitly', { long_url: 'https://e.example/', archived }, OWN), archived).toMatchObject({
        field: 'archived',
        skip: true,
      })
    for (const archived of ['false', '', '0'])
      expect(problemOf(rowFrom('bitly', { long_url: 'https://e.example/', archived }, OWN))).toBe('accepted')
  })

  it('a JSON line takes lists and numbers, and names an unknown member', () => {
    const row = rowFrom('jsonl', { url: 'https://e.example/', tags: ['A', 'b'], clicks: 4 }, OWN) as ImportRow
    expect(row).toMatchObject({ tags: ['a', 'b'], clicks: 4 })
    expect(problemOf(rowFrom('jsonl', { url: 'https://e.example/', owner: 'x' }, OWN))).toMatch(
      /^owner: unknown field/,
    )
    expect(problemOf(rowFrom('jsonl', { url: 'https://e.example/', tags: [1] }, OWN))).toMatch(/^tags: /)
  })
})
