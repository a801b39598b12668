import { type Kysely, sql } from 'kysely'
import type { LinkRow, LinksDatabase } from '../db/database.js'

export interface Link {
  id: string
  slug: string
  targetUrl: string
  tags: string[]
  clicks: number
  /** Set on imported links: the title and the clicks the other service had counted. */
  title: string | null
  importedClicks: number
  createdAt: Date
  updatedAt: Date
}

/** A link and its place in the owner's newest-first order (the keyset of list pages). */
export interface ListedLink {
  link: Link
  seq: number
}

export function toLink(row: LinkRow): Link {
  return {
    id: row.id,
    slug: row.slug,
    targetUrl: row.target_url,
    tags: row.tags,
    clicks: Number(row.clicks),
    title: row.title,
    importedClicks: Number(row.imported_clicks),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

type Db = Kysely<LinksDatabase>

/** Inserts a link; a slug already taken (in any case) throws a unique violation. */
export async function insertLink(
  db: Db,
  link: { ownerId: string; slug: string; targetUrl: string; tags: string[]; now: Date },
): Promise<Link> {
  const row = await db
    .insertInto('links')
    .values({
      owner_id: link.ownerId,
      slug: link.slug,
      target_url: link.targetUrl,
      tags: link.tags,
      created_at: link.now,
      updated_at: link.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toLink(row)
}

export async function findOwnedLink(db: Db, ownerId: string, id: string): Promise<Link | undefined> {
  const row = await db
    .selectFrom('links')
    .selectAll()
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst()
  return row && toLink(row)
}

/** `text` as a LIKE pattern that matches it literally: `%`, `_` and the escape `\` escaped. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/**
 * One page of the owner's links, newest first: `limit` of them after `beforeSeq`, optionally with
 * `tag`, and optionally only those whose slug, target URL or title contains `search` (any case; a
 * parameter, its wildcards escaped). The search walks the owner's links in the order of their
 * (owner_id, seq) index and stops at `limit` matches: its cost is bounded by one user's links.
 */
export async function listOwnedLinks(
  db: Db,
  ownerId: string,
  page: {
    tag?: string | undefined
    search?: string | undefined
    beforeSeq?: number | undefined
    limit: number
  },
): Promise<ListedLink[]> {
  let query = db.selectFrom('links').selectAll().where('owner_id', '=', ownerId)
  if (page.tag !== undefined) query = query.where('tags', '@>', sql<string[]>`array[${page.tag}]::text[]`)
  if (page.search !== undefined) {
    const pattern = `%${likeLiteral(page.search)}%`
    query = query.where((eb) =>
      eb.or([
        eb('slug', 'ilike', pattern),
        eb('target_url', 'ilike', pattern),
        eb('title', 'ilike', pattern),
      ]),
    )
  }
  if (page.beforeSeq !== undefined) query = query.where('seq', '<', page.beforeSeq)
  const rows = await query.orderBy('seq', 'desc').limit(page.limit).execute()
  return rows.map((row) => ({ link: toLink(row), seq: Number(row.seq) }))
}

/** Changes target and/or tags of the owner's link; undefined when there is no such link of theirs. */
export async function updateOwnedLink(
  db: Db,
  ownerId: string,
  id: string,
  changes: { targetUrl?: string | undefined; tags?: string[] | undefined; now: Date },
): Promise<Link | undefined> {
  const row = await db
    .updateTable('links')
    .set({
      ...(changes.targetUrl !== undefined ? { target_url: changes.targetUrl } : {}),
      ...(changes.tags !== undefined ? { tags: changes.tags } : {}),
      updated_at: changes.now,
    })
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .returningAll()
    .executeTakeFirst()
  return row && toLink(row)
}

/** Deletes the owner's link and its click counts; false when there was no such link of theirs. */
export async function deleteOwnedLink(db: Db, ownerId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('links')
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The owner's tags with the number of links carrying each, in alphabetical order. */
export async function countOwnedTags(db: Db, ownerId: string): Promise<{ tag: string; links: number }[]> {
  const tagged = db
    .selectFrom('links')
    .select(sql<string>`unnest(tags)`.as('tag'))
    .where('owner_id', '=', ownerId)
  const rows = await db
    .selectFrom(tagged.as('tagged'))
    .select((eb) => ['tagged.tag', eb.fn.countAll<string | number>().as('links')])
    .groupBy('tagged.tag')
    .orderBy('tagged.tag')
    .execute()
  return rows.map((r) => ({ tag: r.tag, links: Number(r.links) }))
}
