import { z } from 'zod'
import { pathParameter } from '../../../shared/openapi.js'

/**
 * The pieces of the links API's OpenAPI document that its route groups share: zod schemas as JSON
 * Schema, the error answers the error handler gives (error-handler.ts), the token refusals, and the
 * RFC 9728 metadata both resource identifiers (/api and /mcp) serve. Each route group describes its
 * own operations beside its routes (*.openapi.ts); src/openapi.ts puts them into one document.
 */

type JsonSchema = Record<string, unknown>

export function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' })
  return rest
}

/** An answer with a body of this schema. */
export const ok = (description: string, schema: z.ZodType, mediaType = 'application/json') => ({
  description,
  content: { [mediaType]: { schema: jsonSchema(schema) } },
})

export const isoTime = z.string().meta({ description: 'An ISO 8601 UTC timestamp.' })

/** `{error, error_description}`: the links API's errors (RFC 6750 names for token refusals). */
export const errorSchema = z.object({ error: z.string(), error_description: z.string() })
export const error = (description: string) => ok(description, errorSchema)

/** RFC 9457 problem of the import routes, which also carries `error` and `error_description`. */
const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  field: z.string().optional().meta({ description: 'The field (column, query parameter) at fault.' }),
  line: z.number().int().optional().meta({ description: 'The line of the file at fault.' }),
  error: z.string(),
  error_description: z.string(),
})
export const problem = (description: string) => ok(description, problemSchema, 'application/problem+json')

/** RFC 9728 protected-resource metadata, as the toolkit serves it for a resource identifier. */
export const protectedResourceMetadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  dpop_signing_alg_values_supported: z.array(z.string()).optional(),
  dpop_bound_access_tokens_required: z.boolean().optional(),
})

/** An operation of the REST routes: a token for /api with this scope. */
export const bearer = (scope: string) => ({ security: [{ accessToken: [scope] }] })
/** An operation without a token. */
export const open = { security: [] as never[] }
export const noToken = error(
  'invalid_token: no token, or one expired, revoked, tampered with or for another API (WWW-Authenticate names the metadata).',
)
export const wrongScope = (scope: string) => error(`insufficient_scope: the token lacks ${scope}.`)
export const idParameter = (what: string) => pathParameter('id', what)
export const jsonBody = (schema: z.ZodType) => ({
  required: true,
  content: { 'application/json': { schema: jsonSchema(schema) } },
})
