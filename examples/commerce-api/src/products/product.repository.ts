import { type Kysely, sql } from 'kysely'
import type { CommerceDatabase, ProductRow } from '../db/database.js'
import type { NewProduct, ProductCursor } from './product-input.js'

type Db = Kysely<CommerceDatabase>

export interface Product {
  id: string
  shopProductId: string
  title: string
  url: string
  priceMinor: number
  currency: string
  availability: string
  imageUrl: string | null
  createdAt: Date
  updatedAt: Date
}

export function toProduct(row: ProductRow): Product {
  return {
    id: row.id,
    shopProductId: row.shop_product_id,
    title: row.title,
    url: row.url,
    priceMinor: Number(row.price_minor),
    currency: row.currency,
    availability: row.availability,
    imageUrl: row.image_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/**
 * Inserts or updates the owner's products by the shop's id, in one statement. A product whose
 * values are all the same is not written at all (its updated_at stays), unless a sync run names it
 * for the first time (then only its run mark moves). Returns how many were created and updated.
 */
export async function upsertProducts(
  db: Db,
  ownerId: string,
  products: NewProduct[],
  options: { syncRunId: string | undefined; now: Date },
): Promise<{ created: number; updated: number }> {
  const { now } = options
  const rows = await db
    .insertInto('products')
    .values(
      products.map((p) => ({
        owner_id: ownerId,
        shop_product_id: p.shopProductId,
        title: p.title,
        url: p.url,
        price_minor: p.priceMinor,
        currency: p.currency,
        availability: p.availability,
        image_url: p.imageUrl,
        last_sync_run_id: options.syncRunId ?? null,
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['owner_id', 'shop_product_id'])
        .doUpdateSet({
          title: sql`excluded.title`,
          url: sql`excluded.url`,
          price_minor: sql`excluded.price_minor`,
          currency: sql`excluded.currency`,
          availability: sql`excluded.availability`,
          image_url: sql`excluded.image_url`,
          last_sync_run_id: sql`coalesce(excluded.last_sync_run_id, products.last_sync_run_id)`,
          updated_at: sql`case when ${changed} then excluded.updated_at else products.updated_at end`,
        })
        .where(
          sql<boolean>`${changed} or (excluded.last_sync_run_id is not null and excluded.last_sync_run_id is distinct from products.last_sync_run_id)`,
        ),
    )
    .returning([sql<boolean>`(xmax = 0)`.as('inserted'), 'updated_at'])
    .execute()
  const created = rows.filter((r) => r.inserted).length
  const updated = rows.filter((r) => !r.inserted && r.updated_at.getTime() === now.getTime()).length
  return { created, updated }
}

const changed = sql<boolean>`(products.title, products.url, products.price_minor, products.currency, products.availability, products.image_url) is distinct from (excluded.title, excluded.url, excluded.price_minor, excluded.currency, excluded.availability, excluded.image_url)`

export async function findProduct(
  db: Db,
  ownerId: string,
  shopProductId: string,
): Promise<Product | undefined> {
  const row = await db
    .selectFrom('products')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('shop_product_id', '=', shopProductId)
    .executeTakeFirst()
  return row && toProduct(row)
}

/** A page of the owner's catalogue in (updated_at, id) order, after `after`, from `updatedSince` on. */
export async function listProducts(
  db: Db,
  ownerId: string,
  page: {
    updatedSince?: Date | undefined
    availability?: string | undefined
    after?: ProductCursor | undefined
    limit: number
  },
): Promise<Product[]> {
  let query = db.selectFrom('products').selectAll().where('owner_id', '=', ownerId)
  if (page.updatedSince) query = query.where('updated_at', '>=', page.updatedSince)
  if (page.availability) query = query.where('availability', '=', page.availability)
  if (page.after)
    query = query.where(
      sql<boolean>`(updated_at, id) > (${page.after.updatedAt}::timestamptz, ${page.after.id}::uuid)`,
    )
  const rows = await query.orderBy('updated_at').orderBy('id').limit(page.limit).execute()
  return rows.map(toProduct)
}

export async function insertSyncRun(db: Db, ownerId: string, now: Date) {
  return db
    .insertInto('sync_runs')
    .values({ owner_id: ownerId, started_at: now })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function findSyncRun(db: Db, ownerId: string, id: string) {
  return db
    .selectFrom('sync_runs')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/**
 * Completes an open run: every product of the owner that the run did not name, and that was not
 * changed since the run began, is marked unavailable (never deleted: links point at products).
 * One transaction; a run completes once, a second call changes nothing.
 */
export async function completeSyncRun(db: Db, ownerId: string, id: string, now: Date) {
  return db.transaction().execute(async (trx) => {
    const run = await trx
      .selectFrom('sync_runs')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst()
    if (!run || run.status === 'completed') return run
    const marked = await trx
      .updateTable('products')
      .set({ availability: 'unavailable', updated_at: now })
      .where('owner_id', '=', ownerId)
      .where('availability', '<>', 'unavailable')
      .where(sql<boolean>`last_sync_run_id is distinct from ${id}::uuid`)
      .where('updated_at', '<', run.started_at)
      .executeTakeFirst()
    return trx
      .updateTable('sync_runs')
      .set({ status: 'completed', completed_at: now, marked_unavailable: Number(marked.numUpdatedRows) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
  })
}
