import { createHash } from 'node:crypto'
import { slugProblem } from '../links/slug.js'
import { MAX_TAGS_PER_LINK, normalizeTag, tagProblem } from '../links/tag.js'
import { normalizeTargetUrl, targetUrlProblem } from '../links/target-url.js'

/** The formats an import reads: Bitly's CSV export, the generic CSV, the generic JSON Lines. */
export type ImportFormat = 'bitly' | 'csv' | 'jsonl'

/** A row ready to become a link: validated, normalised, with the key that makes it idempotent. */
export interface ImportRow {
  /** The custom slug kept from the other service; null: a random one is made. */
  slug: string | null
  targetUrl: string
  tags: string[]
  title: string | null
  /** ISO 8601, UTC; null: the time of the import. */
  createdAt: string | null
  clicks: number
  /** Unique per owner among links (imports/import.repository.ts): a re-import creates nothing twice. */
  key: string
}

/**
 * Why a row cannot be imported: the field (column) at fault and the reason, in words. `skip`: the
 * row is well-formed but deliberately left out (an archived Bitlink), reported and counted as skipped.
 */
export interface RowProblem {
  field: string
  reason: string
  skip?: true
}

export const MAX_TITLE_LENGTH = 300
export const MAX_UTM_LENGTH = 200
export const MAX_CLICKS = 1_000_000_000_000

/** The UTM parameters the generic format takes as columns; added to the target URL's query. */
export const UTM_FIELDS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const

/** The generic format's fields (CSV header names, JSON Lines member names). `url` is required. */
export const GENERIC_FIELDS = ['url', 'slug', 'tags', 'title', 'created_at', 'clicks', ...UTM_FIELDS] as const

/**
 * Bitly's CSV export: its columns, matched by name whatever the case, spaces or underscores
 * (`Long URL` = `long_url`), each with the aliases its exports have used. Other columns
 * (`id`, `group_guid`, …) are ignored.
 */
export const BITLY_COLUMNS = {
  long_url: ['long_url', 'destination_url', 'original_url'],
  title: ['title'],
  created_at: ['created_at', 'created', 'date_created', 'creation_date'],
  tags: ['tags'],
  clicks: ['clicks', 'total_clicks', 'engagements', 'total_engagements'],
  custom_bitlinks: ['custom_bitlinks', 'custom_bitlink', 'custom_back_half', 'back_half'],
  archived: ['archived', 'is_archived'],
} as const

/** An archived Bitlink is not imported (our links have no archived state): it is skipped, and reported. */
export const ARCHIVED_SKIP: RowProblem = {
  field: 'archived',
  reason: 'an archived Bitlink; not imported (unarchive it at Bitly, or clear the cell, to import it)',
  skip: true,
}
const ARCHIVED = /^(true|yes|1|archived)$/i

/** A CSV header cell as compared: lower case, runs of spaces, `-` and `.` as one `_`. */
export function headerName(cell: string): string {
  return cell
    .trim()
    .toLowerCase()
    .replace(/[\s.-]+/g, '_')
}

/** Which CSV format a header row is: Bitly's (it names `long_url`) or the generic one (`url`). */
export function csvFormatOf(header: readonly string[]): 'bitly' | 'csv' | undefined {
  const names = header.map(headerName)
  if (BITLY_COLUMNS.long_url.some((n) => names.includes(n))) return 'bitly'
  if (names.includes('url')) return 'csv'
  return undefined
}

/** Why a generic CSV header cannot be read (an unknown or repeated column), or undefined. */
export function genericHeaderProblem(header: readonly string[]): string | undefined {
  const seen = new Set<string>()
  for (const cell of header) {
    const name = headerName(cell)
    if (!(GENERIC_FIELDS as readonly string[]).includes(name))
      return `unknown column "${cell.slice(0, 40)}"; the generic format's columns are ${GENERIC_FIELDS.join(', ')}`
    if (seen.has(name)) return `column "${name}" appears twice`
    seen.add(name)
  }
  return undefined
}

const CONTROL = /[\p{Cc}]/u

/**
 * A tag as another service wrote it, in our form: lower case, and a tag of several words kept as
 * one, its spaces as `-` (`Spring Sale` → `spring-sale`).
 */
export function importedTag(tag: string): string {
  return normalizeTag(tag).replace(/\s+/g, '-')
}

/** Tags from a list or from one cell separated by `,`, `;` or `|`. */
function readTags(value: unknown): string[] | RowProblem {
  const list =
    value === undefined || value === null || value === ''
      ? []
      : Array.isArray(value)
        ? value
        : typeof value === 'string'
          ? value.split(/[,;|]/).filter((t) => t.trim() !== '')
          : undefined
  if (!list || list.some((t) => typeof t !== 'string'))
    return { field: 'tags', reason: 'must be a list of tags or a string of tags separated by commas' }
  const tags = [...new Set((list as string[]).map(importedTag))]
  if (tags.length > MAX_TAGS_PER_LINK) return { field: 'tags', reason: `at most ${MAX_TAGS_PER_LINK} tags` }
  for (const tag of tags) {
    const problem = tagProblem(tag)
    if (problem) return { field: 'tags', reason: `"${tag.slice(0, 40)}": ${problem}` }
  }
  return tags
}

/**
 * A creation time as the other service wrote it: ISO 8601 (`2024-03-01T09:30:00Z`, Bitly's
 * `2024-03-01T09:30:00+0000`), `YYYY-MM-DD HH:MM:SS` (UTC), `YYYY-MM-DD`, or Unix seconds.
 */
export function parseCreatedAt(value: string): string | undefined {
  const v = value.trim()
  let time: number
  if (/^\d{9,11}$/.test(v)) time = Number(v) * 1000
  else {
    const match =
      /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(v)
    if (!match) return undefined
    const zone = match[3] ? match[3].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2').toUpperCase() : 'Z'
    time = Date.parse(`${match[1]}T${match[2] ?? '00:00:00'}${zone}`)
    // Date.parse rolls 2024-02-31 over to March: the calendar date must survive the round trip.
    if (!Number.isNaN(time) && !match[3] && !new Date(time).toISOString().startsWith(match[1]!))
      return undefined
  }
  if (Number.isNaN(time) || time < Date.UTC(1990, 0, 1) || time > Date.now() + 86_400_000) return undefined
  return new Date(time).toISOString()
}

/** The target URL with the UTM parameters added (a parameter already in its query is replaced). */
function withTracking(url: string, utm: Record<string, string>): string {
  const entries = Object.entries(utm)
  if (entries.length === 0) return url
  const parsed = new URL(url)
  if (entries.every(([name]) => !parsed.searchParams.has(name))) {
    // Appended as written, so the query the user had is kept byte for byte.
    const added = entries.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&')
    parsed.search = parsed.search ? `${parsed.search.slice(1)}&${added}` : added
    return parsed.href
  }
  for (const [name, value] of entries) parsed.searchParams.set(name, value)
  return parsed.href
}

/**
 * The back-half of a custom Bitlink: the last path segment of a short URL (`bit.ly/spring-sale`,
 * `https://bit.ly/spring-sale`), or the cell itself when it holds only a back-half. Taken whole,
 * spaces and all (`bit.ly/summer sale!` → `summer sale!`), so a back-half our slugs cannot be makes
 * the line invalid rather than be cut short.
 */
function backHalf(bitlink: string): string {
  const path = bitlink.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
  if (!path.includes('/')) return path
  return path.split(/[?#]/, 1)[0]!.split('/').at(-1) ?? ''
}

/**
 * The first custom Bitlink of a cell. Several (one per domain) are separated by `,`, `;` or `|`, or
 * by spaces when each part is a short URL (`bit.ly/a brand.ly/b`); spaces inside one back-half
 * (`bit.ly/summer sale!`) stay in it.
 */
function firstBitlink(cell: string): string | undefined {
  const first = cell
    .split(/[,;|]/)
    .map((c) => c.trim())
    .find((c) => c !== '')
  if (first === undefined) return undefined
  const words = first.split(/\s+/)
  return words.length > 1 && words.every((w) => w.includes('/')) ? words[0] : first
}

/** The import key: per owner, the custom slug and URL, or the URL, title and creation time. */
function importKey(row: Omit<ImportRow, 'key'>): string {
  const identity = row.slug
    ? ['slug', row.slug.toLowerCase(), row.targetUrl]
    : ['url', row.targetUrl, row.title ?? '', row.createdAt ?? '']
  return createHash('sha256').update(JSON.stringify(identity)).digest('base64url')
}

interface Fields {
  url: unknown
  slug?: unknown
  tags?: unknown
  title?: unknown
  created_at?: unknown
  clicks?: unknown
  utm: Record<string, unknown>
}

const asText = (value: unknown) => (typeof value === 'number' ? String(value) : value)

/** The common rules of every format, on its fields mapped to ours. */
function toRow(fields: Fields, ownOrigin: string, urlField: string): ImportRow | RowProblem {
  const url = asText(fields.url)
  if (typeof url !== 'string' || url.trim() === '') return { field: urlField, reason: 'is required' }
  const urlProblem = targetUrlProblem(url.trim(), ownOrigin)
  if (urlProblem) return { field: urlField, reason: urlProblem }

  const utm: Record<string, string> = {}
  for (const [name, raw] of Object.entries(fields.utm)) {
    const value = asText(raw)
    if (value === undefined || value === null || value === '') continue
    if (typeof value !== 'string') return { field: name, reason: 'must be a string' }
    if (value.length > MAX_UTM_LENGTH) return { field: name, reason: `at most ${MAX_UTM_LENGTH} characters` }
    if (CONTROL.test(value)) return { field: name, reason: 'must not contain control characters' }
    utm[name] = value.trim()
  }
  const targetUrl = withTracking(normalizeTargetUrl(url.trim()), utm)
  if (targetUrl.length > 2048)
    return { field: urlField, reason: 'at most 2048 characters with its UTM parameters' }

  let slug: string | null = null
  const rawSlug = asText(fields.slug)
  if (rawSlug !== undefined && rawSlug !== null && rawSlug !== '') {
    if (typeof rawSlug !== 'string') return { field: 'slug', reason: 'must be a string' }
    const problem = slugProblem(rawSlug.trim())
    if (problem) return { field: 'slug', reason: problem }
    slug = rawSlug.trim()
  }

  const tags = readTags(fields.tags)
  if (!Array.isArray(tags)) return tags

  let title: string | null = null
  if (fields.title !== undefined && fields.title !== null && fields.title !== '') {
    if (typeof fields.title !== 'string') return { field: 'title', reason: 'must be a string' }
    if (fields.title.length > MAX_TITLE_LENGTH)
      return { field: 'title', reason: `at most ${MAX_TITLE_LENGTH} characters` }
    if (CONTROL.test(fields.title)) return { field: 'title', reason: 'must not contain control characters' }
    title = fields.title.trim() || null
  }

  let createdAt: string | null = null
  const rawCreated = asText(fields.created_at)
  if (rawCreated !== undefined && rawCreated !== null && rawCreated !== '') {
    const parsed = typeof rawCreated === 'string' ? parseCreatedAt(rawCreated) : undefined
    if (!parsed)
      return {
        field: 'created_at',
        reason:
          'must be a time such as 2024-03-01T09:30:00Z, 2024-03-01 09:30:00 (UTC) or 2024-03-01, not in the future',
      }
    createdAt = parsed
  }

  let clicks = 0
  const rawClicks = asText(fields.clicks)
  if (rawClicks !== undefined && rawClicks !== null && rawClicks !== '') {
    if (
      typeof rawClicks !== 'string' ||
      !/^\d{1,13}$/.test(rawClicks.trim()) ||
      Number(rawClicks) > MAX_CLICKS
    )
      return { field: 'clicks', reason: `must be a whole number from 0 to ${MAX_CLICKS}` }
    clicks = Number(rawClicks)
  }

  const row = { slug, targetUrl, tags, title, createdAt, clicks }
  return { ...row, key: importKey(row) }
}

export const isProblem = (value: ImportRow | RowProblem): value is RowProblem => 'reason' in value

/** Reads one record of a CSV file (cells by header name) or one JSON Lines object into a row. */
export function rowFrom(
  format: ImportFormat,
  record: Record<string, unknown>,
  ownOrigin: string,
): ImportRow | RowProblem {
  if (format === 'bitly') {
    const cell = (names: readonly string[]) => names.map((n) => record[n]).find((v) => v !== undefined)
    const archived = cell(BITLY_COLUMNS.archived)
    if (typeof archived === 'string' && ARCHIVED.test(archived.trim())) return ARCHIVED_SKIP
    const custom = cell(BITLY_COLUMNS.custom_bitlinks)
    // A Bitly link may carry several custom back-halves (one per domain): the first one is kept.
    const first = typeof custom === 'string' ? firstBitlink(custom) : undefined
    return toRow(
      {
        url: cell(BITLY_COLUMNS.long_url),
        slug: first === undefined ? undefined : backHalf(first),
        tags: cell(BITLY_COLUMNS.tags),
        title: cell(BITLY_COLUMNS.title),
        created_at: cell(BITLY_COLUMNS.created_at),
        clicks: cell(BITLY_COLUMNS.clicks),
        utm: {},
      },
      ownOrigin,
      'long_url',
    )
  }
  if (format === 'jsonl') {
    const unknown = Object.keys(record).find((k) => !(GENERIC_FIELDS as readonly string[]).includes(k))
    if (unknown !== undefined)
      return {
        field: unknown.slice(0, 40),
        reason: `unknown field; the fields are ${GENERIC_FIELDS.join(', ')}`,
      }
  }
  return toRow(
    {
      url: record.url,
      slug: record.slug,
      tags: record.tags,
      title: record.title,
      created_at: record.created_at,
      clicks: record.clicks,
      utm: Object.fromEntries(UTM_FIELDS.map((n) => [n, record[n]])),
    },
    ownOrigin,
    'url',
  )
}
