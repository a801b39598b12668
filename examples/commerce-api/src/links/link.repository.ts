import { randomBytes } from 'node:crypto'
import { type Kysely, type QueryCreator, sql } from 'kysely'
import type { CommerceDatabase } from '../db/database.js'

type Db = Kysely<CommerceDatabase>

export interface Utm {
  source: string | null
  medium: string | null
  campaign: string | null
  term: string | null
  content: string | null
}

export interface EcommerceLink {
  id: string
  seq: number
  slug: string
  /** The shop's id of the catalogue product it points at, or null for a fixed URL. */
  productId: string | null
  /** Where it leads now: the product's current URL, or the fixed one. */
  targetUrl: string
  campaign: string | null
  utm: Utm
  clicks: number
  createdAt: Date
  /** When its owner archived it (its short URL answers 410), or null. */
  archivedAt: Date | null
}

/** Which of an owner's links a listing shows. */
export type LinkState = 'active' | 'archived' | 'all'

/** The link's columns with its product's id and URL, and its click count. */
function linkQuery(db: Db) {
  return db
    .selectFrom('links')
    .leftJoin('products', 'products.id', 'links.product_id')
    .select([
      'links.id',
      'links.seq',
      'links.slug',
      'links.campaign',
      'links.utm_source',
      'links.utm_medium',
      'links.utm_campaign',
      'links.utm_term',
      'links.utm_content',
      'links.created_at',
      'links.archived_at',
      'products.shop_product_id',
      sql<string>`coalesce(products.url, links.target_url)`.as('target'),
      sql<string | number>`(select count(*) from commerce_api.clicks c where c.link_id = links.id)`.as(
        'clicks',
      ),
    ])
}

type LinkQueryRow = Awaited<ReturnType<ReturnType<typeof linkQuery>['executeTakeFirstOrThrow']>>

function toLink(row: LinkQueryRow): EcommerceLink {
  return {
    id: row.id,
    seq: Number(row.seq),
    slug: row.slug,
    productId: row.shop_product_id ?? null,
    targetUrl: row.target,
    campaign: row.campaign,
    utm: {
      source: row.utm_source,
      medium: row.utm_medium,
      campaign: row.utm_campaign,
      term: row.utm_term,
      content: row.utm_content,
    },
    clicks: Number(row.clicks),
    createdAt: row.created_at,
    archivedAt: row.archived_at,
  }
}

/** Inserts a link; a slug already taken (in any case) throws a unique violation. */
export async function insertLink(
  db: Db,
  link: {
    ownerId: string
    slug: string
    productRowId: string | null
    targetUrl: string | null
    campaign: string | null
    utm: Utm
    now: Date
  },
): Promise<string> {
  const row = await db
    .insertInto('links')
    .values({
      owner_id: link.ownerId,
      slug: link.slug,
      product_id: link.productRowId,
      target_url: link.targetUrl,
      campaign: link.campaign,
      utm_source: link.utm.source,
      utm_medium: link.utm.medium,
      utm_campaign: link.utm.campaign,
      utm_term: link.utm.term,
      utm_content: link.utm.content,
      created_at: link.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/**
 * Changes the campaign and UTM values of the owner's link (`undefined`: unchanged, `null`: cleared),
 * and archives it (keeping the first time) or brings it back; false when there is no such link of
 * theirs. The target and slug never change: printed links stay true.
 */
export async function updateOwnedLink(
  db: Db,
  ownerId: string,
  id: string,
  changes: {
    campaign?: string | null | undefined
    utm?: Partial<Utm> | undefined
    archived?: boolean | undefined
  },
  now: Date,
): Promise<boolean> {
  const utm = changes.utm ?? {}
  const set = {
    ...(changes.archived === true
      ? { archived_at: sql<Date>`coalesce(archived_at, ${now}::timestamptz)` }
      : {}),
    ...(changes.archived === false ? { archived_at: null } : {}),
    ...(changes.campaign !== undefined ? { campaign: changes.campaign } : {}),
    ...(utm.source !== undefined ? { utm_source: utm.source } : {}),
    ...(utm.medium !== undefined ? { utm_medium: utm.medium } : {}),
    ...(utm.campaign !== undefined ? { utm_campaign: utm.campaign } : {}),
    ...(utm.term !== undefined ? { utm_term: utm.term } : {}),
    ...(utm.content !== undefined ? { utm_content: utm.content } : {}),
  }
  const query = db.updateTable('links').where('id', '=', id).where('owner_id', '=', ownerId)
  const result = await (
    Object.keys(set).length > 0 ? query.set(set) : query.set({ id: sql`id` })
  ).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export async function findOwnedLink(db: Db, ownerId: string, id: string): Promise<EcommerceLink | undefined> {
  const row = await linkQuery(db)
    .where('links.id', '=', id)
    .where('links.owner_id', '=', ownerId)
    .executeTakeFirst()
  return row && toLink(row)
}

export async function listOwnedLinks(
  db: Db,
  ownerId: string,
  page: { campaign?: string | undefined; state: LinkState; beforeSeq?: number | undefined; limit: number },
): Promise<EcommerceLink[]> {
  let query = linkQuery(db).where('links.owner_id', '=', ownerId)
  if (page.state !== 'all')
    query = query.where('links.archived_at', page.state === 'active' ? 'is' : 'is not', null)
  if (page.campaign !== undefined) query = query.where('links.campaign', '=', page.campaign)
  if (page.beforeSeq !== undefined) query = query.where('links.seq', '<', page.beforeSeq)
  const rows = await query.orderBy('links.seq', 'desc').limit(page.limit).execute()
  return rows.map(toLink)
}

/** The owner's product row id for the shop's product id. */
export async function findProductRowId(db: Db, ownerId: string, shopProductId: string) {
  const row = await db
    .selectFrom('products')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('shop_product_id', '=', shopProductId)
    .executeTakeFirst()
  return row?.id
}

/** A click id: 128 random bits, base64url (22 characters). Unguessable, so a conversion cannot be forged onto a link. */
export const newClickId = () => randomBytes(16).toString('base64url')
export const CLICK_ID = /^[A-Za-z0-9_-]{22}$/

/** Where a short URL leads: its target and UTM values, or that its link is archived. */
export type Destination = { archived: false; target: string; utm: Utm } | { archived: true }

function destinationOf(row: Parameters<typeof utmOf>[0] & { target: string; archived_at: Date | null }) {
  return row.archived_at !== null
    ? ({ archived: true } as const)
    : ({ archived: false, target: row.target, utm: utmOf(row) } as const)
}

/** The link with this slug (in any case): its id, where it leads, its UTM values, whether it is archived. */
function linkBySlug(qc: QueryCreator<CommerceDatabase>, slug: string) {
  return qc
    .selectFrom('links')
    .leftJoin('products', 'products.id', 'links.product_id')
    .select([
      'links.id',
      sql<string>`coalesce(products.url, links.target_url)`.as('target'),
      'links.utm_source',
      'links.utm_medium',
      'links.utm_campaign',
      'links.utm_term',
      'links.utm_content',
      'links.archived_at',
    ])
    .where(sql<boolean>`lower(links.slug) = ${slug.toLowerCase()}`)
}

/**
 * Records a click on the link with this slug and returns where to send the visitor (with the
 * link's UTM values), or undefined when no link has the slug. An archived link counts nothing.
 * One statement.
 */
export async function recordClick(
  db: Db,
  slug: string,
  clickId: string,
  now: Date,
): Promise<Destination | undefined> {
  const row = await db
    .with('link', (qc) => linkBySlug(qc, slug))
    .with('clicked', (qb) =>
      qb
        .insertInto('clicks')
        .columns(['id', 'link_id', 'clicked_at'])
        .expression((eb) =>
          eb
            .selectFrom('link')
            .select([
              sql<string>`${clickId}`.as('id'),
              'link.id',
              sql<Date>`${now}::timestamptz`.as('clicked_at'),
            ])
            .where('link.archived_at', 'is', null),
        ),
    )
    .selectFrom('link')
    .selectAll()
    .executeTakeFirst()
  return row && destinationOf(row)
}

/** Where the link with this slug leads, counting nothing (HEAD requests, link previews). */
export async function findTarget(db: Db, slug: string): Promise<Destination | undefined> {
  const row = await linkBySlug(db, slug).executeTakeFirst()
  return row && destinationOf(row)
}

function utmOf(row: {
  utm_source: string | null
  utm_medium: string | null
  utm_campaign: string | null
  utm_term: string | null
  utm_content: string | null
}): Utm {
  return {
    source: row.utm_source,
    medium: row.utm_medium,
    campaign: row.utm_campaign,
    term: row.utm_term,
    content: row.utm_content,
  }
}

/** The owner's campaigns, with how many links each has. */
export async function listCampaigns(db: Db, ownerId: string) {
  const rows = await db
    .selectFrom('links')
    .select((eb) => ['campaign', eb.fn.countAll<string | number>().as('links')])
    .where('owner_id', '=', ownerId)
    .where('campaign', 'is not', null)
    .groupBy('campaign')
    .orderBy('campaign')
    .execute()
  return rows.map((r) => ({ campaign: r.campaign!, links: Number(r.links) }))
}
