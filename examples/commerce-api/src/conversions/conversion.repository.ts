import type { Kysely } from 'kysely'
import type { CommerceDatabase, ConversionRow } from '../db/database.js'

type Db = Kysely<CommerceDatabase>

export interface Conversion {
  id: string
  orderId: string
  clickId: string
  linkId: string
  valueMinor: number
  currency: string
  occurredAt: Date
  createdAt: Date
}

const toConversion = (row: ConversionRow): Conversion => ({
  id: row.id,
  orderId: row.order_id,
  clickId: row.click_id,
  linkId: row.link_id,
  valueMinor: Number(row.value_minor),
  currency: row.currency,
  occurredAt: row.occurred_at,
  createdAt: row.created_at,
})

/** The link of the click, when the click is on one of the owner's links. */
export async function findOwnedClick(db: Db, ownerId: string, clickId: string) {
  return db
    .selectFrom('clicks')
    .innerJoin('links', 'links.id', 'clicks.link_id')
    .select(['clicks.id', 'clicks.link_id', 'clicks.clicked_at'])
    .where('clicks.id', '=', clickId)
    .where('links.owner_id', '=', ownerId)
    .executeTakeFirst()
}

/** Inserts the conversion unless the owner has one for the order already: then undefined. */
export async function insertConversion(
  db: Db,
  c: Omit<Conversion, 'id' | 'createdAt'> & { ownerId: string; now: Date },
): Promise<Conversion | undefined> {
  const row = await db
    .insertInto('conversions')
    .values({
      owner_id: c.ownerId,
      order_id: c.orderId,
      click_id: c.clickId,
      link_id: c.linkId,
      value_minor: c.valueMinor,
      currency: c.currency,
      occurred_at: c.occurredAt,
      created_at: c.now,
    })
    .onConflict((oc) => oc.columns(['owner_id', 'order_id']).doNothing())
    .returningAll()
    .executeTakeFirst()
  return row && toConversion(row)
}

export async function findConversion(
  db: Db,
  ownerId: string,
  orderId: string,
): Promise<Conversion | undefined> {
  const row = await db
    .selectFrom('conversions')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('order_id', '=', orderId)
    .executeTakeFirst()
  return row && toConversion(row)
}
