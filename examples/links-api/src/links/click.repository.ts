import { type Kysely, sql } from 'kysely'
import type { LinksDatabase } from '../db/database.js'

type Db = Kysely<LinksDatabase>

const bySlug = (slug: string) => sql<boolean>`lower(slug) = ${slug.toLowerCase()}`

/**
 * Counts one click on the link with this slug (on its total and on `day`'s bucket) and returns its
 * target, or undefined when no link has the slug. One statement: both counters move together or
 * not at all, and concurrent clicks never lose an increment (each is an UPDATE or an upsert).
 */
export async function recordClick(db: Db, slug: string, day: string): Promise<string | undefined> {
  const row = await db
    .with('hit', (qb) =>
      qb
        .updateTable('links')
        .set({ clicks: sql<number>`clicks + 1` })
        .where(bySlug(slug))
        .returning(['id', 'target_url']),
    )
    .with('counted', (qb) =>
      qb
        .insertInto('link_daily_clicks')
        .columns(['link_id', 'day', 'clicks'])
        .expression((eb) =>
          eb
            .selectFrom('hit')
            .select(['hit.id', sql<string>`${day}::date`.as('day'), sql<number>`1`.as('clicks')]),
        )
        .onConflict((oc) =>
          oc.columns(['link_id', 'day']).doUpdateSet({ clicks: sql<number>`link_daily_clicks.clicks + 1` }),
        ),
    )
    .selectFrom('hit')
    .select('hit.target_url')
    .executeTakeFirst()
  return row?.target_url
}

/** The target of the link with this slug, counting nothing (HEAD requests, link previews). */
export async function findTargetBySlug(db: Db, slug: string): Promise<string | undefined> {
  const row = await db.selectFrom('links').select('target_url').where(bySlug(slug)).executeTakeFirst()
  return row?.target_url
}

/** Clicks per UTC day from `from` to `to` (inclusive, YYYY-MM-DD); days without clicks are absent. */
export async function dailyClicks(
  db: Db,
  linkId: string,
  from: string,
  to: string,
): Promise<{ day: string; clicks: number }[]> {
  const rows = await db
    .selectFrom('link_daily_clicks')
    .select([sql<string>`day::text`.as('day'), 'clicks'])
    .where('link_id', '=', linkId)
    .where('day', '>=', sql<string>`${from}::date`)
    .where('day', '<=', sql<string>`${to}::date`)
    .orderBy('day')
    .execute()
  return rows.map((r) => ({ day: r.day, clicks: Number(r.clicks) }))
}
