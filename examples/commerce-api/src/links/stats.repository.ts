import { type Kysely, sql } from 'kysely'
import type { CommerceDatabase } from '../db/database.js'

type Db = Kysely<CommerceDatabase>

/** Which links: one (by id) or the owner's links of a campaign. */
export type LinkSet = { linkId: string } | { ownerId: string; campaign: string }

function linkIds(db: Db, set: LinkSet) {
  const query = db.selectFrom('links').select('id')
  return 'linkId' in set
    ? query.where('id', '=', set.linkId)
    : query.where('owner_id', '=', set.ownerId).where('campaign', '=', set.campaign)
}

/** [from 00:00 UTC, the day after `to` 00:00 UTC). */
const range = (from: string, to: string) => ({
  start: sql<Date>`${from}::date::timestamp at time zone 'UTC'`,
  end: sql<Date>`(${to}::date + 1)::timestamp at time zone 'UTC'`,
})

/** Clicks per UTC day of the links, from `from` to `to` (inclusive); days without clicks are absent. */
export async function dailyClicks(db: Db, set: LinkSet, from: string, to: string) {
  const { start, end } = range(from, to)
  const day = sql<string>`((clicked_at at time zone 'UTC')::date)::text`
  const rows = await db
    .selectFrom('clicks')
    .select([day.as('day'), (eb) => eb.fn.countAll<string | number>().as('n')])
    .where('link_id', 'in', linkIds(db, set))
    .where('clicked_at', '>=', start)
    .where('clicked_at', '<', end)
    .groupBy(day)
    .execute()
  return rows.map((r) => ({ day: r.day, clicks: Number(r.n) }))
}

/** Conversions and their summed value (minor units, as a decimal string of digits) per UTC day and currency. */
export async function dailyConversions(db: Db, set: LinkSet, from: string, to: string) {
  const { start, end } = range(from, to)
  const day = sql<string>`((occurred_at at time zone 'UTC')::date)::text`
  const rows = await db
    .selectFrom('conversions')
    .select([
      day.as('day'),
      'currency',
      (eb) => eb.fn.countAll<string | number>().as('n'),
      sql<string>`sum(value_minor)::text`.as('value_minor'),
    ])
    .where('link_id', 'in', linkIds(db, set))
    .where('occurred_at', '>=', start)
    .where('occurred_at', '<', end)
    .groupBy([day, 'currency'])
    .execute()
  return rows.map((r) => ({
    day: r.day,
    currency: r.currency,
    conversions: Number(r.n),
    valueMinor: BigInt(r.value_minor),
  }))
}
