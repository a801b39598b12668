import { CURRENCY_CODES } from '../money/currencies.js'
import { MAX_MINOR } from '../money/money.js'

/**
 * The pieces of the commerce API's OpenAPI document that its route groups share: the JSON Schema
 * helpers, time and money fields, the problem and token-refusal answers, how a protected operation
 * is described, and page parameters. Each route group describes its own operations and schemas
 * beside its routes (*.openapi.ts); src/openapi.ts puts them into one document.
 */
export type Json = Record<string, unknown>

/** Schemas are inlined (no $ref): each response schema is a self-contained JSON Schema document. */
export const json = (schema: Json) => ({ 'application/json': { schema } })
export const nullable = (schema: Json) => ({ anyOf: [schema, { type: 'null' }] })

/** The scope of the links, statistics and conversions operations. */
export const ECOM = 'ecommerce:write'

export const time = { type: 'string', format: 'date-time' }
export const currency = { type: 'string', enum: [...CURRENCY_CODES], description: 'ISO 4217.' }
export const minor = { type: 'integer', minimum: 0, maximum: MAX_MINOR, description: 'Minor units (cents).' }
export const decimal = {
  type: 'string',
  pattern: '^\\d{1,16}(\\.\\d{1,4})?$',
  description: 'Major units, e.g. "19.99".',
}

const Problem: Json = {
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
}

const AuthError: Json = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
}

export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: Problem } },
})
const authError = (description: string) => ({ description, content: json(AuthError) })

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

export function operation(
  scope: string,
  op: { summary: string; description?: string; operationId: string; tags: string[] } & Json,
  responses: Record<string, unknown>,
) {
  return { ...op, security: [{ bearer: [scope] }], responses: protectedResponses(scope, responses) }
}

/** The answer of a write past what the application's standing allows (examples/shared/app-leash.ts). */
export const appLimitReached = problem(
  'app_limit_reached: this application made as many writes for this person this hour as its standing allows (`client_standing`: unverified 50, vouched 500 by default; verified apps are not limited). `retry_after` (seconds, also the Retry-After header) and `retry_at` say when to try again; `limit`, `window_seconds` and `client_standing` say why.',
)

/** A write: an operation that counts against the application's hourly limit, and may answer 429. */
export function writeOperation(...[scope, op, responses]: Parameters<typeof operation>) {
  return operation(scope, op, { ...responses, '429': appLimitReached })
}

export const pageParameters = (max: number, fallback: number) => [
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
