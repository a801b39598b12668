import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { InvalidRequestError, isUniqueViolation, LinkNotFoundError, SlugTakenError } from '../errors.js'
import { dailyClicks, findTargetBySlug, recordClick } from './click.repository.js'
import {
  encodeCursor,
  type LinkChanges,
  type ListQuery,
  type NewLink,
  type StatsQuery,
} from './link-input.js'
import {
  countOwnedTags,
  deleteOwnedLink,
  findOwnedLink,
  insertLink,
  type Link,
  listOwnedLinks,
  updateOwnedLink,
} from './link.repository.js'
import { randomSlug, SLUG_PATTERN } from './slug.js'
import { pageOf } from '../../../shared/paging.js'
import type { AppLeash, WritingApp } from '../../../shared/app-leash.js'

export type { Link }

export interface LinkServiceDeps {
  db: Kysely<LinksDatabase>
  clock: { now(): Date }
  /** The limit on new links an application makes for each person, by standing (app-leash.ts). */
  leash?: Pick<AppLeash, 'charge'> | undefined
}

export interface LinkPage {
  links: Link[]
  /** Pass as `cursor` for the next page; undefined on the last page. */
  nextCursor: string | undefined
}

export interface LinkStats {
  linkId: string
  from: string
  to: string
  /** Every click since the link was made. */
  totalClicks: number
  clicksInRange: number
  /** One entry per UTC day from `from` to `to`, days without clicks included. */
  days: { date: string; clicks: number }[]
}

/** Stats cover at most a year and a day: a bounded answer, whatever the query. */
export const MAX_STATS_DAYS = 366
const DEFAULT_STATS_DAYS = 30
/** A random slug collides once in ~10^11 tries; a few retries make failure practically impossible. */
const RANDOM_SLUG_ATTEMPTS = 5

/** Link ids are UUIDs: anything else names no link, and is answered without a query. */
const LINK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const DAY_MS = 86_400_000
const utcDay = (date: Date) => date.toISOString().slice(0, 10)
const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS

/**
 * The rules of short links. Every operation is scoped to the owner (the access token's `sub`):
 * another user's link behaves exactly like a link that does not exist.
 */
export function createLinkService({ db, clock, leash }: LinkServiceDeps) {
  async function ownedLink(ownerId: string, id: string): Promise<Link> {
    const link = LINK_ID.test(id) ? await findOwnedLink(db, ownerId, id) : undefined
    if (!link) throw new LinkNotFoundError()
    return link
  }

  /** The insert, and a random slug tried again on the rare collision. */
  async function insertNewLink(ownerId: string, input: NewLink): Promise<Link> {
    const now = clock.now()
    const values = { ownerId, targetUrl: input.target_url, tags: input.tags, now }
    if (input.slug !== undefined) {
      try {
        return await insertLink(db, { ...values, slug: input.slug })
      } catch (err) {
        if (isUniqueViolation(err)) throw new SlugTakenError(input.slug)
        throw err
      }
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await insertLink(db, { ...values, slug: randomSlug() })
      } catch (err) {
        if (!isUniqueViolation(err) || attempt >= RANDOM_SLUG_ATTEMPTS) throw err
      }
    }
  }

  return {
    /**
     * Creates a link for `ownerId`. With `app` (the application acting, from its token) the link
     * counts against what its standing allows for this person this hour (AppLimitReachedError past
     * it); a link that then fails to be made is taken back off the count.
     */
    async createLink(ownerId: string, input: NewLink, app?: WritingApp): Promise<Link> {
      const takeBack = leash && app ? await leash.charge(ownerId, app) : undefined
      try {
        return await insertNewLink(ownerId, input)
      } catch (err) {
        await takeBack?.().catch(() => {})
        throw err
      }
    },

    async listLinks(ownerId: string, query: ListQuery): Promise<LinkPage> {
      // One more than asked tells whether another page follows, without a count.
      const rows = await listOwnedLinks(db, ownerId, {
        tag: query.tag,
        search: query.q,
        beforeSeq: query.cursor,
        limit: query.limit + 1,
      })
      const { items, nextCursor } = pageOf(rows, query.limit, (last) => encodeCursor(last.seq))
      return { links: items.map((r) => r.link), nextCursor }
    },

    getLink: ownedLink,

    async updateLink(ownerId: string, id: string, changes: LinkChanges): Promise<Link> {
      const link = LINK_ID.test(id)
        ? await updateOwnedLink(db, ownerId, id, {
            targetUrl: changes.target_url,
            tags: changes.tags,
            now: clock.now(),
          })
        : undefined
      if (!link) throw new LinkNotFoundError()
      return link
    },

    async deleteLink(ownerId: string, id: string): Promise<void> {
      if (!LINK_ID.test(id) || !(await deleteOwnedLink(db, ownerId, id))) throw new LinkNotFoundError()
    },

    listTags: (ownerId: string) => countOwnedTags(db, ownerId),

    /** Clicks per UTC day over a range (default: the last 30 days up to today), and the total. */
    async linkStats(ownerId: string, id: string, query: StatsQuery): Promise<LinkStats> {
      const link = await ownedLink(ownerId, id)
      const to = query.to ?? utcDay(clock.now())
      const from =
        query.from ?? utcDay(new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_STATS_DAYS - 1) * DAY_MS))
      const span = dayNumber(to) - dayNumber(from) + 1
      if (span < 1) throw new InvalidRequestError('from: must not be after to')
      if (span > MAX_STATS_DAYS)
        throw new InvalidRequestError(`to: at most ${MAX_STATS_DAYS} days after from`)
      const counted = new Map((await dailyClicks(db, link.id, from, to)).map((d) => [d.day, d.clicks]))
      const days = Array.from({ length: span }, (_, i) => {
        const date = utcDay(new Date((dayNumber(from) + i) * DAY_MS))
        return { date, clicks: counted.get(date) ?? 0 }
      })
      return {
        linkId: link.id,
        from,
        to,
        totalClicks: link.clicks,
        clicksInRange: days.reduce((sum, d) => sum + d.clicks, 0),
        days,
      }
    },

    /**
     * The target a short URL sends a visitor to, counting the click (unless `count` is false), or
     * undefined for a slug no link has. Anything that cannot be a slug is answered without a query.
     */
    async resolveSlug(slug: string, options: { count: boolean }): Promise<string | undefined> {
      if (!SLUG_PATTERN.test(slug)) return undefined
      return options.count ? recordClick(db, slug, utcDay(clock.now())) : findTargetBySlug(db, slug)
    },
  }
}

export type LinkService = ReturnType<typeof createLinkService>
