import { z } from 'zod'
import { ALL_SCOPES } from '../lib/scopes.js'
import { MAX_PARAMETER_LENGTH, MAX_PARAMETERS } from '../input/parameters.js'

/**
 * The pieces route groups describe their operations with (each group's `*.openapi.ts`, beside its
 * routes); document.ts assembles them into the two OpenAPI 3.1 documents. Schemas are inlined (no
 * $ref) so that each response schema is a self-contained JSON Schema 2020-12 document, and
 * test/openapi/ checks real answers against them, so a description cannot drift from its route.
 */

type JsonSchema = Record<string, unknown>

/** Path → method → OpenAPI operation object. */
export type Operations = Record<string, Record<string, object>>

/** A zod schema as JSON Schema 2020-12 (the OpenAPI 3.1 dialect), without the $schema member. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' })
  return rest
}

/** An answer with a body of this schema. */
export const ok = (description: string, schema: z.ZodType, mediaType = 'application/json') => ({
  description,
  content: { [mediaType]: { schema: jsonSchema(schema) } },
})

/** A request body sent form-encoded (RFC 6749) or as JSON. */
export const formAndJson = (schema: z.ZodType) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema: jsonSchema(schema, 'input') },
    'application/json': { schema: jsonSchema(schema, 'input') },
  },
})

export const jsonBody = (schema: z.ZodType, required = true) => ({
  required,
  content: { 'application/json': { schema: jsonSchema(schema, 'input') } },
})

/** Marks an operation that needs no credentials (OpenAPI: an empty list of requirements). */
export const open = { security: [] as never[] }

// ---- fields several bodies share -------------------------------------------------------------------

export const scopeString = z
  .string()
  .meta({ description: `Space-separated scopes (RFC 6749 §3.3) from: ${ALL_SCOPES.join(', ')}.` })
/** In a token or revocation body; a public client may send it as the HTTP Basic user-id instead. */
export const clientIdField = z.string().optional().meta({
  description:
    'The client_id the operator issued. Required unless sent as the HTTP Basic user-id (`Authorization: Basic base64(client_id:)`, empty password; RFC 6749 §2.3.1); when sent both ways they must be equal.',
})
export const epochSeconds = z.number().int().meta({ description: 'Seconds since 1970-01-01T00:00:00Z.' })

// ---- error answers -------------------------------------------------------------------------------

/** RFC 6749 §5.2 (and RFC 7009, RFC 7662) error body. */
export const oauthErrorSchema = z.object({
  error: z.enum([
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'unsupported_token_type',
    'invalid_scope',
    'server_error',
    'temporarily_unavailable',
    'invalid_stream',
    'invalid_dpop_proof',
    'use_dpop_nonce',
    'invalid_token',
    'invalid_redirect_uri',
    'invalid_client_metadata',
    'invalid_target',
    'access_denied',
    'authorization_pending',
    'slow_down',
    'expired_token',
  ]),
  error_description: z.string(),
})

/** RFC 9457, as ProblemError.toJSON() writes it. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  field: z.string().optional().meta({ description: 'The request field at fault, when there is one.' }),
})

export const oauthError = (description: string) => ok(description, oauthErrorSchema)
export const problem = (description: string) => ok(description, problemSchema, 'application/problem+json')

/** The 503 of an OAuth endpoint. */
export const oauthUnavailable = oauthError('The database is unreachable; retry after `Retry-After` seconds.')
export const oauthRateLimited = oauthError(
  'temporarily_unavailable: a rate limit (per client or resource server and address, or per address for ' +
    'requests naming no valid caller); wait `Retry-After` seconds.',
)
export const oauthTooLarge = oauthError(
  'invalid_request: the body is larger than BODY_LIMIT (64 KiB by default).',
)

/** Every route refuses a query over these limits (web/parameters.ts). */
export const tooManyParameters = problem(
  `More than ${MAX_PARAMETERS} query parameters, or one longer than ${MAX_PARAMETER_LENGTH} characters.`,
)

// ---- the admin API -------------------------------------------------------------------------------

export const badInput = problem('A field is invalid; `field` names it.')
export const noAdminToken = problem('No or wrong admin token (WWW-Authenticate: Bearer).')
export const adminAuthLimited = problem(
  'This address sent ADMIN_AUTH_FAILURE_LIMIT wrong admin tokens this minute; wait `Retry-After` seconds.',
)

/** A required string in the path, such as `{id}`. */
export const pathParameter = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
})

export const idParameter = (description: string) => pathParameter('id', description)

/** An optional query parameter of a list (a filter, `cursor`, `limit`); a string unless `schema` says. */
export const queryParameter = (
  name: string,
  description: string,
  schema: Record<string, unknown> = { type: 'string' },
) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
})

/** The `next_cursor` of a page the admin API answers; `description` says what the next page holds. */
export const nextCursor = (description: string) => z.string().nullable().meta({ description })

/** ISO 8601 timestamps as the admin and account APIs write them. */
export const isoTime = z
  .string()
  .meta({ description: 'An ISO 8601 UTC timestamp, e.g. 2026-01-31T12:00:00.000Z.' })
