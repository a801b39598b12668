import type { Kysely } from 'kysely'
import { randomSlug, SLUG_PATTERN } from '../../../shared/slug.js'
import type { CommerceDatabase } from '../db/database.js'
import {
  InvalidRequestError,
  isUniqueViolation,
  NotFoundError,
  SlugTakenError,
  UnprocessableError,
} from '../errors.js'
import { dayNumber, dayOf, utcDay, UUID } from '../web/input.js'
import {
  encodeLinkCursor,
  type LinkChanges,
  type LinkListQuery,
  type NewLink,
  type StatsQuery,
} from './link-input.js'
import {
  type Destination,
  type EcommerceLink,
  findOwnedLink,
  findProductRowId,
  findTarget,
  insertLink,
  listCampaigns,
  listOwnedLinks,
  newClickId,
  recordClick,
  updateOwnedLink,
  type Utm,
} from './link.repository.js'
import { dailyClicks, dailyConversions, type LinkSet } from './stats.repository.js'
import { pageOf } from '../../../shared/paging.js'

export type { EcommerceLink, Utm }

/** The query parameter the redirect adds: the click id the shop reports back with a conversion. */
export const CLICK_ID_PARAMETER = 'lclid'

/** Stats cover at most a year and a day: a bounded answer, whatever the query. */
export const MAX_STATS_DAYS = 366
const DEFAULT_STATS_DAYS = 30
const RANDOM_SLUG_ATTEMPTS = 5

export interface Revenue {
  currency: string
  valueMinor: bigint
}

export interface Stats {
  from: string
  to: string
  clicks: number
  conversions: number
  /** conversions / clicks, rounded to 4 decimals; null without clicks. */
  conversionRate: number | null
  revenue: Revenue[]
  days: { date: string; clicks: number; conversions: number; revenue: Revenue[] }[]
}

const rate = (conversions: number, clicks: number) =>
  clicks === 0 ? null : Math.round((conversions / clicks) * 10_000) / 10_000

function addRevenue(list: Revenue[], currency: string, valueMinor: bigint): void {
  const entry = list.find((r) => r.currency === currency)
  if (entry) entry.valueMinor += valueMinor
  else list.push({ currency, valueMinor })
  list.sort((a, b) => a.currency.localeCompare(b.currency))
}

/** The target with the link's UTM values (they replace the target's own) and the click id added. */
export function redirectUrl(target: string, utm: Utm, clickId: string | undefined): string {
  const url = new URL(target)
  for (const [key, value] of Object.entries(utm))
    if (value !== null) url.searchParams.set(`utm_${key}`, value)
  if (clickId !== undefined) url.searchParams.set(CLICK_ID_PARAMETER, clickId)
  return url.href
}

/**
 * E-commerce links, their clicks and statistics. Every operation is scoped to the owner (the access
 * token's `sub`): another user's link behaves exactly like a link that does not exist.
 */
export function createLinkService({ db, clock }: { db: Kysely<CommerceDatabase>; clock: { now(): Date } }) {
  async function ownedLink(ownerId: string, id: string): Promise<EcommerceLink> {
    const link = UUID.test(id) ? await findOwnedLink(db, ownerId, id) : undefined
    if (!link) throw new NotFoundError('No link of yours has this id.')
    return link
  }

  async function stats(set: LinkSet, query: StatsQuery): Promise<Stats> {
    const to = query.to ?? utcDay(clock.now())
    const from = query.from ?? dayOf(dayNumber(to) - (DEFAULT_STATS_DAYS - 1))
    const span = dayNumber(to) - dayNumber(from) + 1
    if (span < 1) throw new InvalidRequestError('from: must not be after to', 400, 'from')
    if (span > MAX_STATS_DAYS)
      throw new InvalidRequestError(`to: at most ${MAX_STATS_DAYS} days after from`, 400, 'to')
    const [clicks, conversions] = await Promise.all([
      dailyClicks(db, set, from, to),
      dailyConversions(db, set, from, to),
    ])
    const days = Array.from({ length: span }, (_, i) => ({
      date: dayOf(dayNumber(from) + i),
      clicks: 0,
      conversions: 0,
      revenue: [] as Revenue[],
    }))
    const byDate = new Map(days.map((d) => [d.date, d]))
    for (const c of clicks) byDate.get(c.day)!.clicks += c.clicks
    const revenue: Revenue[] = []
    for (const c of conversions) {
      const d = byDate.get(c.day)!
      d.conversions += c.conversions
      addRevenue(d.revenue, c.currency, c.valueMinor)
      addRevenue(revenue, c.currency, c.valueMinor)
    }
    const totalClicks = days.reduce((sum, d) => sum + d.clicks, 0)
    const totalConversions = days.reduce((sum, d) => sum + d.conversions, 0)
    return {
      from,
      to,
      clicks: totalClicks,
      conversions: totalConversions,
      conversionRate: rate(totalConversions, totalClicks),
      revenue,
      days,
    }
  }

  return {
    async createLink(ownerId: string, input: NewLink): Promise<EcommerceLink> {
      let productRowId: string | null = null
      if (input.product_id !== undefined) {
        productRowId = (await findProductRowId(db, ownerId, input.product_id)) ?? null
        if (!productRowId)
          throw new UnprocessableError(
            'unknown_product',
            '/product_id',
            'product_id: no product of your catalogue has this id; sync it first (POST /api/products/batch) or give target_url',
          )
      }
      const values = {
        ownerId,
        productRowId,
        targetUrl: input.target_url ?? null,
        campaign: input.campaign ?? null,
        utm: {
          source: input.utm.source ?? null,
          medium: input.utm.medium ?? null,
          // The campaign name is the UTM campaign unless one is given.
          campaign: input.utm.campaign ?? input.campaign ?? null,
          term: input.utm.term ?? null,
          content: input.utm.content ?? null,
        },
        now: clock.now(),
      }
      for (let attempt = 1; ; attempt++) {
        const slug = input.slug ?? randomSlug()
        try {
          return await ownedLink(ownerId, await insertLink(db, { ...values, slug }))
        } catch (err) {
          if (!isUniqueViolation(err)) throw err
          if (input.slug !== undefined) throw new SlugTakenError(input.slug)
          if (attempt >= RANDOM_SLUG_ATTEMPTS) throw err
        }
      }
    },

    async listLinks(ownerId: string, query: LinkListQuery) {
      const rows = await listOwnedLinks(db, ownerId, {
        campaign: query.campaign,
        state: query.state,
        beforeSeq: query.cursor,
        limit: query.limit + 1,
      })
      const { items, nextCursor } = pageOf(rows, query.limit, (last) => encodeLinkCursor(last.seq))
      return { links: items, nextCursor }
    },

    getLink: ownedLink,

    async updateLink(ownerId: string, id: string, changes: LinkChanges): Promise<EcommerceLink> {
      if (!UUID.test(id) || !(await updateOwnedLink(db, ownerId, id, changes, clock.now())))
        throw new NotFoundError('No link of yours has this id.')
      return ownedLink(ownerId, id)
    },

    async linkStats(ownerId: string, id: string, query: StatsQuery) {
      const link = await ownedLink(ownerId, id)
      return { link, stats: await stats({ linkId: link.id }, query) }
    },

    async campaignStats(ownerId: string, campaign: string, query: StatsQuery) {
      const campaigns = await listCampaigns(db, ownerId)
      const found = campaigns.find((c) => c.campaign === campaign)
      if (!found) throw new NotFoundError('No link of yours has this campaign.')
      return { links: found.links, stats: await stats({ ownerId, campaign }, query) }
    },

    listCampaigns: (ownerId: string) => listCampaigns(db, ownerId),

    /**
     * Where a short URL sends a visitor: the target with UTM values and, when the click is counted
     * (GET), the new click id; `archived` for an archived link (nothing counted). Undefined for a
     * slug no link has.
     */
    async follow(
      slug: string,
      options: { count: boolean },
    ): Promise<{ archived: false; url: string } | { archived: true } | undefined> {
      if (!SLUG_PATTERN.test(slug)) return undefined
      const clickId = options.count ? newClickId() : undefined
      const found: Destination | undefined =
        clickId === undefined ? await findTarget(db, slug) : await recordClick(db, slug, clickId, clock.now())
      if (!found || found.archived) return found
      return { archived: false, url: redirectUrl(found.target, found.utm, clickId) }
    },
  }
}

export type LinkService = ReturnType<typeof createLinkService>
