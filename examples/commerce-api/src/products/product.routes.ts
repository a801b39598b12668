import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseInput } from '../../../shared/parse.js'
import { formatMinor } from '../money/money.js'
import { noStore, ownerOf, SYNC } from '../web/owner.js'
import type { ProductInputSchemas } from './product-input.js'
import type { Product, ProductService, SyncRun } from './product.service.js'

/** A batch of 1,000 products with long URLs and titles fits; nothing larger is read. */
export const BATCH_BODY_LIMIT = 4 * 1024 * 1024

export function productJson(p: Product) {
  return {
    product_id: p.shopProductId,
    title: p.title,
    url: p.url,
    price: formatMinor(p.priceMinor, p.currency),
    price_minor: p.priceMinor,
    currency: p.currency,
    availability: p.availability,
    image_url: p.imageUrl,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
  }
}

function runJson(run: SyncRun) {
  return {
    id: run.id,
    status: run.status,
    started_at: run.startedAt.toISOString(),
    completed_at: run.completedAt?.toISOString() ?? null,
    marked_unavailable: run.markedUnavailable,
  }
}

/** The catalogue (products:sync): batches, full-sync runs, the listing and one product. */
export function productRoutes(products: ProductService, schemas: ProductInputSchemas) {
  const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name]!
  return async (app: FastifyInstance) => {
    noStore(app)

    app.post('/api/products/batch', { config: SYNC, bodyLimit: BATCH_BODY_LIMIT }, async (request) => {
      const batch = parseInput(schemas.batch, request.body)
      return products.syncBatch(ownerOf(request), batch)
    })

    app.get('/api/products', { config: SYNC }, async (request) => {
      const page = await products.listProducts(
        ownerOf(request),
        parseInput(schemas.listQuery, request.query, 'query'),
      )
      return { products: page.products.map(productJson), next_cursor: page.nextCursor ?? null }
    })

    app.get('/api/products/:product_id', { config: SYNC }, async (request) => {
      return productJson(await products.getProduct(ownerOf(request), param(request, 'product_id')))
    })

    app.post('/api/products/sync-runs', { config: SYNC }, async (request, reply) => {
      const run = await products.startSyncRun(ownerOf(request))
      return reply.code(201).header('location', `/api/products/sync-runs/${run.id}`).send(runJson(run))
    })

    app.get('/api/products/sync-runs/:id', { config: SYNC }, async (request) => {
      return runJson(await products.getSyncRun(ownerOf(request), param(request, 'id')))
    })

    app.post('/api/products/sync-runs/:id/complete', { config: SYNC }, async (request) => {
      return runJson(await products.completeSyncRun(ownerOf(request), param(request, 'id')))
    })
  }
}
