import { pathParameter } from '../../../shared/openapi.js'
import {
  currency,
  decimal,
  type Json,
  json,
  minor,
  nullable,
  operation,
  writeOperation,
  pageParameters,
  problem,
  time,
} from '../web/openapi.js'
import { AVAILABILITIES, MAX_BATCH, MAX_PRODUCT_PAGE } from './product-input.js'

/** The product routes (product.routes.ts) in the OpenAPI document: the catalogue and its sync runs. */

export const SYNC = 'products:sync'

const ProductInput: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['product_id', 'title', 'url', 'currency', 'availability'],
  properties: {
    product_id: { type: 'string', minLength: 1, maxLength: 200 },
    title: { type: 'string', minLength: 1, maxLength: 500 },
    url: { type: 'string', format: 'uri', maxLength: 2048 },
    price: decimal,
    price_minor: minor,
    currency,
    availability: { type: 'string', enum: [...AVAILABILITIES] },
    image_url: nullable({ type: 'string', format: 'uri', maxLength: 2048 }),
  },
  description: 'Give exactly one of price and price_minor.',
}

const Product: Json = {
  type: 'object',
  additionalProperties: false,
  required: [
    'product_id',
    'title',
    'url',
    'price',
    'price_minor',
    'currency',
    'availability',
    'image_url',
    'created_at',
    'updated_at',
  ],
  properties: {
    product_id: { type: 'string' },
    title: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    price: { type: 'string' },
    price_minor: { type: 'integer' },
    currency: { type: 'string' },
    availability: { type: 'string', enum: [...AVAILABILITIES] },
    image_url: nullable({ type: 'string', format: 'uri' }),
    created_at: time,
    updated_at: time,
  },
}

const ProductBatch: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['products'],
  properties: {
    products: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: ProductInput },
    sync_run_id: { type: 'string', format: 'uuid' },
  },
}

const BatchResult: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['received', 'created', 'updated', 'unchanged'],
  properties: {
    received: { type: 'integer' },
    created: { type: 'integer' },
    updated: { type: 'integer' },
    unchanged: { type: 'integer' },
  },
}

const ProductPage: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['products', 'next_cursor'],
  properties: {
    products: { type: 'array', items: Product },
    next_cursor: nullable({ type: 'string' }),
  },
}

const SyncRun: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status', 'started_at', 'completed_at', 'marked_unavailable'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: { type: 'string', enum: ['open', 'completed'] },
    started_at: time,
    completed_at: nullable(time),
    marked_unavailable: nullable({ type: 'integer' }),
  },
}

export function productOpenApiPaths() {
  return {
    '/api/products/batch': {
      post: writeOperation(
        SYNC,
        {
          summary: 'Upsert up to 1,000 products by the shop’s product id',
          description:
            'Idempotent: a product whose values are all unchanged is not written (its `updated_at` stays). ' +
            'With `sync_run_id`, the products count as seen by that full-sync run.',
          operationId: 'syncProducts',
          tags: ['Products'],
          requestBody: { required: true, content: json(ProductBatch) },
        },
        {
          '200': { description: 'What the batch did.', content: json(BatchResult) },
          '409': problem('The sync run is completed.'),
          '413': problem('The body is larger than 4 MiB.'),
          '415': problem('The body is not application/json.'),
          '422': problem('`sync_run_id` names no sync run of this user.'),
        },
      ),
    },
    '/api/products': {
      get: operation(
        SYNC,
        {
          summary: 'List the catalogue in (updated_at, id) order',
          operationId: 'listProducts',
          tags: ['Products'],
          parameters: [
            {
              name: 'updated_since',
              in: 'query',
              required: false,
              schema: { type: 'string', format: 'date-time' },
              description: 'Only products with `updated_at` at or after this time (RFC 3339 with offset).',
            },
            {
              name: 'availability',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: [...AVAILABILITIES] },
              description: 'Only products with this availability.',
            },
            ...pageParameters(MAX_PRODUCT_PAGE, 100),
          ],
        },
        { '200': { description: 'A page.', content: json(ProductPage) } },
      ),
    },
    '/api/products/{product_id}': {
      get: operation(
        SYNC,
        {
          summary: 'Read one product by the shop’s product id',
          operationId: 'getProduct',
          tags: ['Products'],
          parameters: [pathParameter('product_id', 'The shop’s product id (URL-encoded).')],
        },
        {
          '200': { description: 'The product.', content: json(Product) },
          '404': problem('No product of this user has this id.'),
        },
      ),
    },
    '/api/products/sync-runs': {
      post: writeOperation(
        SYNC,
        {
          summary: 'Start a full sync',
          description: 'Send the whole catalogue in batches with this run’s id, then complete the run.',
          operationId: 'startSyncRun',
          tags: ['Products'],
        },
        { '201': { description: 'The run, open.', content: json(SyncRun) } },
      ),
    },
    '/api/products/sync-runs/{id}': {
      get: operation(
        SYNC,
        {
          summary: 'Read a sync run',
          operationId: 'getSyncRun',
          tags: ['Products'],
          parameters: [pathParameter('id', 'The run’s id.')],
        },
        {
          '200': { description: 'The run.', content: json(SyncRun) },
          '404': problem('No sync run of this user has this id.'),
        },
      ),
    },
    '/api/products/sync-runs/{id}/complete': {
      post: writeOperation(
        SYNC,
        {
          summary: 'Complete a full sync',
          description:
            'Marks every product the run did not name (and that did not change since it began) `unavailable`. ' +
            'Products are never deleted. Completing again answers the same.',
          operationId: 'completeSyncRun',
          tags: ['Products'],
          parameters: [pathParameter('id', 'The run’s id.')],
        },
        {
          '200': { description: 'The run, completed.', content: json(SyncRun) },
          '404': problem('No sync run of this user has this id.'),
        },
      ),
    },
  }
}
