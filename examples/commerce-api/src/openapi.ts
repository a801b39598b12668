import { CURRENCY_CODES } from './money/currencies.js'
import { MAX_MINOR } from './money/money.js'
import { AVAILABILITIES, MAX_BATCH, MAX_PRODUCT_PAGE } from './products/product-input.js'
import { pathParameter } from '../../shared/openapi.js'

/**
 * The commerce API's OpenAPI 3.1 document, served at GET /openapi.json. Its response schemas are
 * checked against the API's real answers (test/openapi.test.ts) and it passes Redocly's
 * recommended rules.
 */
type Json = Record<string, unknown>

/** Schemas are inlined (no $ref): each response schema is a self-contained JSON Schema document. */
let cached: Record<string, Json> | undefined
const ref = (name: string): Json => (cached ??= schemas())[name]!
const json = (schema: Json) => ({ 'application/json': { schema } })
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
})
const authError = (description: string) => ({ description, content: json(ref('AuthError')) })
const nullable = (schema: Json) => ({ anyOf: [schema, { type: 'null' }] })

/** 400/401/403 and the rest every protected operation may answer. */
function protectedResponses(scope: string, extra: Record<string, unknown> = {}) {
  return {
    ...extra,
    '400': problem(
      'Bad input: `detail` and `field` name the field (a JSON pointer into the body, or the query parameter).',
    ),
    '401': authError(
      'No access token, or one this API refuses (expired, revoked, for another API: `aud` must be this API).',
    ),
    '403': authError(`The token lacks the scope \`${scope}\` (\`insufficient_scope\`).`),
    '503': problem('The database is unavailable; retry after Retry-After seconds.'),
  }
}

function operation(
  scope: string,
  op: { summary: string; description?: string; operationId: string; tags: string[] } & Json,
  responses: Record<string, unknown>,
) {
  return { ...op, security: [{ bearer: [scope] }], responses: protectedResponses(scope, responses) }
}

const day = { type: 'string', format: 'date', description: 'A UTC day, YYYY-MM-DD.' }
const statsParameters = [
  {
    name: 'from',
    in: 'query',
    required: false,
    schema: day,
    description: 'First day (default: 29 days before `to`).',
  },
  {
    name: 'to',
    in: 'query',
    required: false,
    schema: day,
    description: 'Last day (default: today, UTC). At most 366 days.',
  },
]
const pageParameters = (max: number, fallback: number) => [
  {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: max, default: fallback },
    description: 'Page size.',
  },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    schema: { type: 'string', maxLength: 200 },
    description: '`next_cursor` of the previous page (opaque).',
  },
]

export function commerceOpenApiDocument(options: { publicUrl: string; resource: string; issuer: string }) {
  const SYNC = 'products:sync'
  const ECOM = 'ecommerce:write'
  return {
    openapi: '3.1.0',
    info: {
      title: 'Commerce API',
      version: '1',
      description:
        'Product catalogue sync, e-commerce short links with click ids, conversion tracking and statistics, ' +
        `for the user an access token of linkauth (${options.issuer}) speaks for. Tokens must be issued for this ` +
        `API's resource identifier, ${options.resource} (RFC 8707 \`resource\`). Money is never a JSON float: ` +
        'amounts are integers of minor units or decimal strings. See examples/commerce-api/README.md.',
    },
    servers: [{ url: options.publicUrl }],
    tags: [
      { name: 'Products', description: `The catalogue (scope \`${SYNC}\`).` },
      { name: 'Links', description: `E-commerce links and statistics (scope \`${ECOM}\`).` },
      { name: 'Conversions', description: `Conversion tracking (scope \`${ECOM}\`).` },
      { name: 'Public', description: 'Short URLs, health and this document: no token.' },
    ],
    paths: {
      '/api/products/batch': {
        post: operation(
          SYNC,
          {
            summary: 'Upsert up to 1,000 products by the shop’s product id',
            description:
              'Idempotent: a product whose values are all unchanged is not written (its `updated_at` stays). ' +
              'With `sync_run_id`, the products count as seen by that full-sync run.',
            operationId: 'syncProducts',
            tags: ['Products'],
            requestBody: { required: true, content: json(ref('ProductBatch')) },
          },
          {
            '200': { description: 'What the batch did.', content: json(ref('BatchResult')) },
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
          { '200': { description: 'A page.', content: json(ref('ProductPage')) } },
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
            '200': { description: 'The product.', content: json(ref('Product')) },
            '404': problem('No product of this user has this id.'),
          },
        ),
      },
      '/api/products/sync-runs': {
        post: operation(
          SYNC,
          {
            summary: 'Start a full sync',
            description: 'Send the whole catalogue in batches with this run’s id, then complete the run.',
            operationId: 'startSyncRun',
            tags: ['Products'],
          },
          { '201': { description: 'The run, open.', content: json(ref('SyncRun')) } },
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
            '200': { description: 'The run.', content: json(ref('SyncRun')) },
            '404': problem('No sync run of this user has this id.'),
          },
        ),
      },
      '/api/products/sync-runs/{id}/complete': {
        post: operation(
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
            '200': { description: 'The run, completed.', content: json(ref('SyncRun')) },
            '404': problem('No sync run of this user has this id.'),
          },
        ),
      },
      '/api/links': {
        post: operation(
          ECOM,
          {
            summary: 'Create an e-commerce link',
            operationId: 'createLink',
            tags: ['Links'],
            requestBody: { required: true, content: json(ref('NewLink')) },
          },
          {
            '201': { description: 'The link.', content: json(ref('Link')) },
            '409': problem('The slug is taken.'),
            '413': problem('The body is larger than 16 KiB.'),
            '415': problem('The body is not application/json.'),
            '422': problem('`product_id` names no product of this user’s catalogue.'),
          },
        ),
        get: operation(
          ECOM,
          {
            summary: 'List e-commerce links, newest first',
            operationId: 'listLinks',
            tags: ['Links'],
            parameters: [
              {
                name: 'campaign',
                in: 'query',
                required: false,
                schema: { type: 'string', maxLength: 100 },
                description: 'Only this campaign’s links.',
              },
              {
                name: 'state',
                in: 'query',
                required: false,
                schema: { type: 'string', enum: ['active', 'archived', 'all'], default: 'active' },
                description: 'Links not archived (default), archived ones, or both.',
              },
              ...pageParameters(100, 20),
            ],
          },
          { '200': { description: 'A page.', content: json(ref('LinkPage')) } },
        ),
      },
      '/api/links/{id}': {
        get: operation(
          ECOM,
          {
            summary: 'Read an e-commerce link',
            operationId: 'getLink',
            tags: ['Links'],
            parameters: [pathParameter('id', 'The link’s id.')],
          },
          {
            '200': { description: 'The link.', content: json(ref('Link')) },
            '404': problem('No link of this user has this id.'),
          },
        ),
        patch: operation(
          ECOM,
          {
            summary: 'Change the campaign or UTM values of an e-commerce link, or archive it',
            description:
              'Each named value replaces the old one; null clears it. The target and slug never change. ' +
              '`archived: true` ends the link: its short URL answers 410 and counts nothing, its slug stays taken, ' +
              'and its clicks, conversions (reported later too) and statistics stay. `archived: false` brings it back. ' +
              'Links are never deleted.',
            operationId: 'updateLink',
            tags: ['Links'],
            parameters: [pathParameter('id', 'The link’s id.')],
            requestBody: { required: true, content: json(ref('LinkChanges')) },
          },
          {
            '200': { description: 'The link.', content: json(ref('Link')) },
            '404': problem('No link of this user has this id.'),
            '413': problem('The body is larger than 16 KiB.'),
            '415': problem('The body is not application/json.'),
          },
        ),
      },
      '/api/links/{id}/stats': {
        get: operation(
          ECOM,
          {
            summary: 'Statistics of a link by UTC day',
            operationId: 'linkStats',
            tags: ['Links'],
            parameters: [pathParameter('id', 'The link’s id.'), ...statsParameters],
          },
          {
            '200': {
              description: 'Clicks, conversions, rate, revenue per currency.',
              content: json(ref('LinkStats')),
            },
            '404': problem('No link of this user has this id.'),
          },
        ),
      },
      '/api/campaigns': {
        get: operation(
          ECOM,
          { summary: 'List campaigns', operationId: 'listCampaigns', tags: ['Links'] },
          {
            '200': {
              description: 'Every campaign with its number of links.',
              content: json(ref('CampaignList')),
            },
          },
        ),
      },
      '/api/campaigns/{campaign}/stats': {
        get: operation(
          ECOM,
          {
            summary: 'Statistics of a campaign by UTC day',
            operationId: 'campaignStats',
            tags: ['Links'],
            parameters: [pathParameter('campaign', 'The campaign name (URL-encoded).'), ...statsParameters],
          },
          {
            '200': { description: 'Over all the campaign’s links.', content: json(ref('CampaignStats')) },
            '404': problem('No link of this user has this campaign.'),
          },
        ),
      },
      '/api/conversions': {
        post: operation(
          ECOM,
          {
            summary: 'Report a conversion',
            description:
              'Idempotent by order id: the same report again answers 200 with the same body; other values for the same order id answer 409.',
            operationId: 'reportConversion',
            tags: ['Conversions'],
            requestBody: { required: true, content: json(ref('NewConversion')) },
          },
          {
            '200': { description: 'Reported before with the same values.', content: json(ref('Conversion')) },
            '201': { description: 'Recorded.', content: json(ref('Conversion')) },
            '409': problem('A conversion for this order id was reported with other values.'),
            '413': problem('The body is larger than 16 KiB.'),
            '415': problem('The body is not application/json.'),
            '422': problem('`click_id` names no click on this user’s links (unknown, or another user’s).'),
          },
        ),
      },
      '/api/conversions/{order_id}': {
        get: operation(
          ECOM,
          {
            summary: 'Read a conversion by order id',
            operationId: 'getConversion',
            tags: ['Conversions'],
            parameters: [pathParameter('order_id', 'The shop’s order id (URL-encoded).')],
          },
          {
            '200': { description: 'The conversion.', content: json(ref('Conversion')) },
            '404': problem('No conversion of this user has this order id.'),
          },
        ),
      },
      '/{slug}': {
        get: {
          summary: 'Follow an e-commerce short link',
          description:
            'Records a click and redirects to the product with the link’s UTM parameters and the click id in the `lclid` query parameter. ' +
            'HEAD answers the same redirect without a click id and counts nothing.',
          operationId: 'followLink',
          tags: ['Public'],
          security: [],
          parameters: [pathParameter('slug', 'The link’s slug (any case).')],
          responses: {
            '302': {
              description: 'To the product.',
              headers: {
                Location: { description: 'The target with utm_* and lclid.', schema: { type: 'string' } },
              },
            },
            '404': {
              description: 'No such link: a page.',
              content: { 'text/html': {} },
            },
            '410': {
              description: 'The link was archived by its owner: a page. Nothing is counted.',
              content: { 'text/html': {} },
            },
          },
        },
      },
      '/openapi.json': {
        get: {
          summary: 'This document',
          operationId: 'openApiDocument',
          tags: ['Public'],
          security: [],
          responses: {
            '200': { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) },
          },
        },
      },
      '/healthz': {
        get: {
          summary: 'Liveness',
          operationId: 'healthz',
          tags: ['Public'],
          security: [],
          responses: {
            '200': { description: 'The process runs.', content: json(ref('Health')) },
          },
        },
      },
      '/readyz': {
        get: {
          summary: 'Readiness',
          operationId: 'readyz',
          tags: ['Public'],
          security: [],
          responses: {
            '200': { description: 'Ready, with how tokens are verified.', content: json(ref('Ready')) },
            '503': { description: 'The database is unavailable.', content: json(ref('Ready')) },
          },
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `A linkauth access token (RFC 9068) whose aud is ${options.resource}.`,
        },
      },
    },
  }
}

function schemas(): Record<string, Json> {
  const all: Record<string, Json> = {}
  const time = { type: 'string', format: 'date-time' }
  const currency = { type: 'string', enum: [...CURRENCY_CODES], description: 'ISO 4217.' }
  const minor = { type: 'integer', minimum: 0, maximum: MAX_MINOR, description: 'Minor units (cents).' }
  const decimal = {
    type: 'string',
    pattern: '^\\d{1,16}(\\.\\d{1,4})?$',
    description: 'Major units, e.g. "19.99".',
  }
  const utm = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      ['source', 'medium', 'campaign', 'term', 'content'].map((k) => [
        k,
        nullable({ type: 'string', maxLength: 200 }),
      ]),
    ),
  }
  const revenue = {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['currency', 'value_minor', 'value'],
      properties: {
        currency: { type: 'string' },
        value_minor: { type: 'string', pattern: '^\\d+$', description: 'Sum in minor units, as a string.' },
        value: { type: 'string', description: 'Sum in major units.' },
      },
    },
  }
  const statsProperties = {
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    clicks: { type: 'integer' },
    conversions: { type: 'integer' },
    conversion_rate: nullable({
      type: 'number',
      description: 'conversions / clicks, 4 decimals; null without clicks.',
    }),
    revenue,
    days: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'clicks', 'conversions', 'revenue'],
        properties: {
          date: { type: 'string', format: 'date' },
          clicks: { type: 'integer' },
          conversions: { type: 'integer' },
          revenue,
        },
      },
    },
  }
  const statsRequired = ['from', 'to', 'clicks', 'conversions', 'conversion_rate', 'revenue', 'days']
  const verification = { type: 'object' }
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
  const Link: Json = {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'slug',
      'short_url',
      'product_id',
      'target_url',
      'campaign',
      'utm',
      'clicks',
      'created_at',
      'archived_at',
    ],
    properties: {
      id: { type: 'string', format: 'uuid' },
      slug: { type: 'string' },
      short_url: { type: 'string', format: 'uri' },
      product_id: nullable({ type: 'string' }),
      target_url: { type: 'string', format: 'uri' },
      campaign: nullable({ type: 'string' }),
      utm: { ...utm, required: ['source', 'medium', 'campaign', 'term', 'content'] },
      clicks: { type: 'integer' },
      created_at: time,
      archived_at: {
        ...nullable(time),
        description: 'When it was archived (its short URL answers 410), or null.',
      },
    },
  }
  const list: [string, Json][] = Object.entries({
    Problem: {
      type: 'object',
      required: ['type', 'title', 'status', 'detail', 'code'],
      properties: {
        type: { type: 'string' },
        title: { type: 'string' },
        status: { type: 'integer' },
        detail: { type: 'string' },
        code: {
          type: 'string',
          description:
            'Stable: invalid_request, not_found, slug_taken, unknown_product, unknown_click, unknown_sync_run, sync_run_completed, conversion_conflict, temporarily_unavailable.',
        },
        field: {
          type: 'string',
          description: 'A JSON pointer into the body (/products/3/price), or the query parameter.',
        },
      },
    },
    AuthError: {
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'string' }, error_description: { type: 'string' } },
    },
    ProductInput,
    ProductBatch: {
      type: 'object',
      additionalProperties: false,
      required: ['products'],
      properties: {
        products: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: ProductInput },
        sync_run_id: { type: 'string', format: 'uuid' },
      },
    },
    BatchResult: {
      type: 'object',
      additionalProperties: false,
      required: ['received', 'created', 'updated', 'unchanged'],
      properties: {
        received: { type: 'integer' },
        created: { type: 'integer' },
        updated: { type: 'integer' },
        unchanged: { type: 'integer' },
      },
    },
    Product,
    ProductPage: {
      type: 'object',
      additionalProperties: false,
      required: ['products', 'next_cursor'],
      properties: {
        products: { type: 'array', items: Product },
        next_cursor: nullable({ type: 'string' }),
      },
    },
    SyncRun: {
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
    },
    NewLink: {
      type: 'object',
      additionalProperties: false,
      description: 'Give exactly one of product_id and target_url.',
      properties: {
        product_id: { type: 'string', minLength: 1, maxLength: 200 },
        target_url: { type: 'string', format: 'uri', maxLength: 2048 },
        slug: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{1,62}[A-Za-z0-9]$' },
        campaign: { type: 'string', minLength: 1, maxLength: 100 },
        utm: utm,
      },
    },
    Link,
    LinkChanges: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        campaign: nullable({ type: 'string', minLength: 1, maxLength: 100 }),
        utm: {
          type: 'object',
          additionalProperties: false,
          properties: Object.fromEntries(
            ['source', 'medium', 'campaign', 'term', 'content'].map((k) => [
              k,
              nullable({ type: 'string', minLength: 1, maxLength: 200 }),
            ]),
          ),
        },
        archived: { type: 'boolean', description: 'true archives the link, false brings it back.' },
      },
    },
    LinkPage: {
      type: 'object',
      additionalProperties: false,
      required: ['links', 'next_cursor'],
      properties: { links: { type: 'array', items: Link }, next_cursor: nullable({ type: 'string' }) },
    },
    LinkStats: {
      type: 'object',
      additionalProperties: false,
      required: ['link_id', 'campaign', ...statsRequired],
      properties: {
        link_id: { type: 'string', format: 'uuid' },
        campaign: nullable({ type: 'string' }),
        ...statsProperties,
      },
    },
    CampaignStats: {
      type: 'object',
      additionalProperties: false,
      required: ['campaign', 'links', ...statsRequired],
      properties: { campaign: { type: 'string' }, links: { type: 'integer' }, ...statsProperties },
    },
    CampaignList: {
      type: 'object',
      additionalProperties: false,
      required: ['campaigns'],
      properties: {
        campaigns: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['campaign', 'links'],
            properties: { campaign: { type: 'string' }, links: { type: 'integer' } },
          },
        },
      },
    },
    NewConversion: {
      type: 'object',
      additionalProperties: false,
      required: ['click_id', 'order_id', 'currency'],
      description: 'Give exactly one of value and value_minor. occurred_at defaults to now.',
      properties: {
        click_id: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{22}$',
          description: 'The lclid the redirect added.',
        },
        order_id: { type: 'string', minLength: 1, maxLength: 200 },
        value: decimal,
        value_minor: minor,
        currency,
        occurred_at: time,
      },
    },
    Conversion: {
      type: 'object',
      additionalProperties: false,
      required: [
        'id',
        'order_id',
        'click_id',
        'link_id',
        'value',
        'value_minor',
        'currency',
        'occurred_at',
        'created_at',
      ],
      properties: {
        id: { type: 'string', format: 'uuid' },
        order_id: { type: 'string' },
        click_id: { type: 'string' },
        link_id: { type: 'string', format: 'uuid' },
        value: { type: 'string' },
        value_minor: { type: 'integer' },
        currency: { type: 'string' },
        occurred_at: time,
        created_at: time,
      },
    },
    Health: { type: 'object', required: ['status'], properties: { status: { type: 'string' } } },
    Ready: {
      type: 'object',
      required: ['status', 'verification'],
      properties: { status: { type: 'string' }, reason: { type: 'string' }, verification },
    },
  })
  for (const [name, schema] of list) all[name] = schema
  return all
}
