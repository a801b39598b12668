import type { Kysely } from 'kysely'
import type { CommerceDatabase } from '../db/database.js'
import { NotFoundError, SyncRunClosedError, UnprocessableError } from '../errors.js'
import { UUID } from '../web/input.js'
import { encodeProductCursor, type ProductBatch, type ProductListQuery } from './product-input.js'
import {
  completeSyncRun,
  findProduct,
  findSyncRun,
  insertSyncRun,
  listProducts,
  type Product,
  upsertProducts,
} from './product.repository.js'
import { pageOf } from '../../../shared/paging.js'

export type { Product }

export interface SyncRun {
  id: string
  status: 'open' | 'completed'
  startedAt: Date
  completedAt: Date | null
  markedUnavailable: number | null
}

const toRun = (row: {
  id: string
  status: 'open' | 'completed'
  started_at: Date
  completed_at: Date | null
  marked_unavailable: number | null
}): SyncRun => ({
  id: row.id,
  status: row.status,
  startedAt: row.started_at,
  completedAt: row.completed_at,
  markedUnavailable: row.marked_unavailable,
})

/**
 * The rules of a user's product catalogue (the access token's `sub` owns it): upsert by the shop's
 * id, idempotent; full syncs as runs that mark what they did not name unavailable; listing by
 * (updated_at, id) for reconciliation.
 */
export function createProductService({
  db,
  clock,
}: {
  db: Kysely<CommerceDatabase>
  clock: { now(): Date }
}) {
  return {
    async syncBatch(ownerId: string, batch: ProductBatch) {
      if (batch.sync_run_id !== undefined) {
        const run = await findSyncRun(db, ownerId, batch.sync_run_id)
        if (!run)
          throw new UnprocessableError(
            'unknown_sync_run',
            '/sync_run_id',
            'sync_run_id: no sync run of yours has this id; start one with POST /api/products/sync-runs',
          )
        if (run.status === 'completed') throw new SyncRunClosedError()
      }
      const { created, updated } = await upsertProducts(db, ownerId, batch.products, {
        syncRunId: batch.sync_run_id,
        now: clock.now(),
      })
      return {
        received: batch.products.length,
        created,
        updated,
        unchanged: batch.products.length - created - updated,
      }
    },

    async getProduct(ownerId: string, shopProductId: string): Promise<Product> {
      const product = await findProduct(db, ownerId, shopProductId)
      if (!product) throw new NotFoundError('No product of yours has this product_id.')
      return product
    },

    async listProducts(ownerId: string, query: ProductListQuery) {
      const rows = await listProducts(db, ownerId, {
        updatedSince: query.updated_since,
        availability: query.availability,
        after: query.cursor,
        limit: query.limit + 1,
      })
      const { items, nextCursor } = pageOf(rows, query.limit, encodeProductCursor)
      return { products: items, nextCursor }
    },

    async startSyncRun(ownerId: string): Promise<SyncRun> {
      return toRun(await insertSyncRun(db, ownerId, clock.now()))
    },

    async getSyncRun(ownerId: string, id: string): Promise<SyncRun> {
      const run = UUID.test(id) ? await findSyncRun(db, ownerId, id) : undefined
      if (!run) throw new NotFoundError('No sync run of yours has this id.')
      return toRun(run)
    },

    async completeSyncRun(ownerId: string, id: string): Promise<SyncRun> {
      const run = UUID.test(id) ? await completeSyncRun(db, ownerId, id, clock.now()) : undefined
      if (!run) throw new NotFoundError('No sync run of yours has this id.')
      return toRun(run)
    },
  }
}

export type ProductService = ReturnType<typeof createProductService>
