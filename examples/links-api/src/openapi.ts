import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { pathParameter } from '../../shared/openapi.js'
import { GENERIC_FIELDS } from './imports/import-row.js'
import { MAX_SEARCH_LENGTH } from './links/link-input.js'
import { mcpOpenApiPaths, mcpSecurityScheme } from './mcp/mcp.openapi.js'

/**
 * The OpenAPI 3.1 document of the links API: every route it serves, described here in one place
 * and served at GET /openapi.json. test/openapi.test.ts checks real answers against it and that
 * every registered route is in it; scripts/lint-openapi.ts lints it with Redocly.
 */

type JsonSchema = Record<string, unknown>

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' })
  return rest
}

const ok = (description: string, schema: z.ZodType, mediaType = 'application/json') => ({
  description,
  content: { [mediaType]: { schema: jsonSchema(schema) } },
})

const isoTime = z.string().meta({ description: 'An ISO 8601 UTC timestamp.' })

/** `{error, error_description}`: the links API's errors (RFC 6750 names for token refusals). */
const errorSchema = z.object({ error: z.string(), error_description: z.string() })
const error = (description: string) => ok(description, errorSchema)

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
const problem = (description: string) => ok(description, problemSchema, 'application/problem+json')

const linkSchema = z.object({
  id: z.string(),
  slug: z.string(),
  short_url: z.string(),
  target_url: z.string(),
  tags: z.array(z.string()),
  clicks: z.number().int().meta({ description: 'Clicks counted by this service.' }),
  title: z.string().nullable().meta({ description: 'An imported link: its title at the other service.' }),
  imported_clicks: z
    .number()
    .int()
    .meta({ description: 'An imported link: the clicks the other service had counted (0 otherwise).' }),
  created_at: isoTime,
  updated_at: isoTime,
})

const newLinkSchema = z.object({
  target_url: z.string(),
  slug: z.string().optional(),
  tags: z.array(z.string()).optional(),
})

const statsSchema = z.object({
  link_id: z.string(),
  from: z.string(),
  to: z.string(),
  total_clicks: z.number().int(),
  clicks_in_range: z.number().int(),
  days: z.array(z.object({ date: z.string(), clicks: z.number().int() })),
})

const importSchema = z.object({
  id: z.string(),
  state: z.enum(['receiving', 'queued', 'running', 'done', 'failed', 'incomplete']).meta({
    description:
      'receiving (the file arrives) → queued → running → done; failed: a batch could not be written (resume it); incomplete: the upload was cut off (upload again).',
  }),
  format: z.enum(['bitly', 'csv', 'jsonl']),
  lines_read: z.number().int().meta({ description: 'Data lines read from the file.' }),
  valid_rows: z.number().int(),
  created: z.number().int(),
  skipped: z.number().int().meta({
    description:
      'Rows already imported (by an earlier run of the same file) or repeated in it, and archived Bitlinks (each with a report line).',
  }),
  conflicts: z.number().int(),
  invalid: z.number().int(),
  error: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
  finished_at: isoTime.nullable(),
})

const importProblemSchema = z.object({
  line: z.number().int(),
  kind: z.enum(['invalid', 'conflict', 'skipped']),
  field: z.string().nullable(),
  reason: z.string(),
})

const dryRunSchema = z.object({
  dry_run: z.literal(true),
  format: z.enum(['bitly', 'csv', 'jsonl']),
  lines_read: z.number().int(),
  would_create: z.number().int(),
  skipped: z.number().int(),
  conflicts: z.number().int(),
  invalid: z.number().int(),
  problems: z.array(importProblemSchema).meta({ description: 'The first 1000 problem lines.' }),
  problems_truncated: z.boolean(),
})

const readinessSchema = z.object({
  status: z.enum(['ready', 'unavailable']),
  reason: z.string().optional(),
  verification: z.object({
    mode: z.enum(['local', 'fallback', 'introspection']),
    feed_connected: z.boolean(),
    introspection_calls: z.number().int(),
    jwks_fetches: z.number().int(),
    feed_events_received: z.number().int(),
  }),
})

const metadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  dpop_signing_alg_values_supported: z.array(z.string()).optional(),
  dpop_bound_access_tokens_required: z.boolean().optional(),
})

const bearer = (scope: string) => ({ security: [{ accessToken: [scope] }] })
const open = { security: [] as never[] }
const noToken = error(
  'invalid_token: no token, or one expired, revoked, tampered with or for another API (WWW-Authenticate names the metadata).',
)
const wrongScope = (scope: string) => error(`insufficient_scope: the token lacks ${scope}.`)
const badInput = error('invalid_request: a field breaks a rule; the description names it.')
const unavailable = error('The database is unreachable; retry after Retry-After seconds.')
const importAuth = {
  '401': noToken,
  '403': wrongScope('links:write'),
}
const idParameter = (what: string) => pathParameter('id', what)
const jsonBody = (schema: z.ZodType) => ({
  required: true,
  content: { 'application/json': { schema: jsonSchema(schema) } },
})

const uploadBody = {
  required: true,
  description:
    'The file, streamed. CSV: a Bitly export (its header names long_url) or the generic CSV (header of ' +
    `${GENERIC_FIELDS.join(', ')}; url required). JSON Lines: one object per line with the same fields.`,
  content: {
    'text/csv': { schema: { type: 'string' } },
    'application/x-ndjson': { schema: { type: 'string' } },
    'application/jsonl': { schema: { type: 'string' } },
  },
}

/** `mcp`: the MCP endpoint is served (its registration is configured), so documented too. */
export function linksOpenApiDocument(publicUrl: string, options: { mcp?: boolean } = {}) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Links API',
      version: '1',
      description:
        'The short-link API of the link-shortening service: short links with tags and click statistics, ' +
        'and imports from another shortener. A resource API of linkauth: Bearer access tokens for its ' +
        'resource identifier, scopes links:read and links:write.',
    },
    servers: [{ url: publicUrl }],
    components: {
      securitySchemes: {
        accessToken: {
          type: 'oauth2',
          description:
            'An access token from linkauth for this API (RFC 8707 resource), sent as Bearer (RFC 6750).',
          flows: {
            authorizationCode: {
              authorizationUrl: '/oauth/authorize',
              tokenUrl: '/api/oauth/token',
              scopes: {
                'links:read': 'Read your short links and their statistics.',
                'links:write': 'Create, change, delete and import your short links.',
              },
            },
          },
        },
        ...(options.mcp ? { mcpAccessToken: mcpSecurityScheme } : {}),
      },
    },
    paths: {
      '/api/links': {
        post: {
          operationId: 'createLink',
          summary: 'Create a short link (a custom slug or a random one).',
          ...bearer('links:write'),
          requestBody: jsonBody(newLinkSchema),
          responses: {
            '201': ok('The link; Location names it.', linkSchema),
            '400': badInput,
            '401': noToken,
            '403': wrongScope('links:write'),
            '409': error('slug_taken: the custom slug is in use.'),
            '413': badInput,
            '415': error('invalid_request: the body is not application/json.'),
            '503': unavailable,
          },
        },
        get: {
          operationId: 'listLinks',
          summary: "List the user's links, newest first, optionally by tag or text, a page at a time.",
          ...bearer('links:read'),
          parameters: [
            { name: 'tag', in: 'query', required: false, schema: { type: 'string' } },
            {
              name: 'q',
              in: 'query',
              required: false,
              description: 'Only links whose slug, target URL or title contains this text, in any case.',
              schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH },
            },
            {
              name: 'limit',
              in: 'query',
              required: false,
              schema: { type: 'integer', minimum: 1, maximum: 100 },
            },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: {
            '200': ok(
              'A page of links.',
              z.object({ links: z.array(linkSchema), next_cursor: z.string().nullable() }),
            ),
            '400': badInput,
            '401': noToken,
            '403': wrongScope('links:read'),
            '503': unavailable,
          },
        },
      },
      '/api/links/{id}': {
        get: {
          operationId: 'getLink',
          summary: 'Read one of the user’s links.',
          ...bearer('links:read'),
          parameters: [idParameter('The link id.')],
          responses: {
            '200': ok('The link.', linkSchema),
            '401': noToken,
            '403': wrongScope('links:read'),
            '404': error('not_found: no such link of this user.'),
          },
        },
        patch: {
          operationId: 'updateLink',
          summary: 'Change the target URL or tags of a link.',
          ...bearer('links:write'),
          parameters: [idParameter('The link id.')],
          requestBody: jsonBody(
            z.object({ target_url: z.string().optional(), tags: z.array(z.string()).optional() }),
          ),
          responses: {
            '200': ok('The changed link.', linkSchema),
            '400': badInput,
            '401': noToken,
            '403': wrongScope('links:write'),
            '404': error('not_found: no such link of this user.'),
          },
        },
        delete: {
          operationId: 'deleteLink',
          summary: 'Delete a link and its statistics.',
          ...bearer('links:write'),
          parameters: [idParameter('The link id.')],
          responses: {
            '204': { description: 'Deleted.' },
            '401': noToken,
            '403': wrongScope('links:write'),
            '404': error('not_found: no such link of this user.'),
          },
        },
      },
      '/api/links/{id}/stats': {
        get: {
          operationId: 'linkStats',
          summary: 'Clicks of a link per UTC day and in total.',
          ...bearer('links:read'),
          parameters: [
            idParameter('The link id.'),
            { name: 'from', in: 'query', required: false, schema: { type: 'string', format: 'date' } },
            { name: 'to', in: 'query', required: false, schema: { type: 'string', format: 'date' } },
          ],
          responses: {
            '200': ok('The statistics.', statsSchema),
            '400': badInput,
            '401': noToken,
            '403': wrongScope('links:read'),
            '404': error('not_found: no such link of this user.'),
          },
        },
      },
      '/api/tags': {
        get: {
          operationId: 'listTags',
          summary: "The user's tags with the number of links carrying each.",
          ...bearer('links:read'),
          responses: {
            '200': ok(
              'The tags, alphabetically.',
              z.object({ tags: z.array(z.object({ tag: z.string(), links: z.number().int() })) }),
            ),
            '401': noToken,
            '403': wrongScope('links:read'),
          },
        },
      },
      '/api/imports': {
        post: {
          operationId: 'importLinks',
          summary: 'Import links from another shortener (a dry run with dry_run=true).',
          description:
            'With dry_run=true: the report of what would be created, what conflicts and what is invalid, writing nothing. ' +
            'Otherwise: a job, processed in batches in the background; poll GET /api/imports/{id}.',
          ...bearer('links:write'),
          parameters: [
            {
              name: 'dry_run',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
            },
          ],
          requestBody: uploadBody,
          responses: {
            '200': ok('The dry run’s report.', dryRunSchema),
            '202': ok('The job (Location names it), queued.', importSchema),
            '400': problem(
              'A bad header, a line too long, broken CSV, a bad query parameter: field and line named.',
            ),
            ...importAuth,
            '413': problem(
              'The file is larger than LINKS_IMPORT_MAX_BYTES or has more rows than LINKS_IMPORT_MAX_ROWS.',
            ),
            '415': problem('The body is not text/csv or JSON Lines.'),
            '503': problem('The database is unreachable.'),
          },
        },
        get: {
          operationId: 'listImports',
          summary: "The user's 50 latest imports.",
          ...bearer('links:write'),
          responses: {
            '200': ok('The imports, newest first.', z.object({ imports: z.array(importSchema) })),
            ...importAuth,
          },
        },
      },
      '/api/imports/{id}': {
        get: {
          operationId: 'getImport',
          summary: 'An import’s progress: its state and counters.',
          ...bearer('links:write'),
          parameters: [idParameter('The import id.')],
          responses: {
            '200': ok('The import.', importSchema),
            ...importAuth,
            '404': problem('No such import of this user.'),
          },
        },
      },
      '/api/imports/{id}/report': {
        get: {
          operationId: 'importReport',
          summary: 'An import’s report: its invalid, conflicting and skipped archived lines, 1000 at a time.',
          ...bearer('links:write'),
          parameters: [
            idParameter('The import id.'),
            {
              name: 'after',
              in: 'query',
              required: false,
              schema: { type: 'string' },
              description: 'next_after of the previous page.',
            },
          ],
          responses: {
            '200': ok(
              'The import and a page of its problem lines.',
              z.object({
                import: importSchema,
                problems: z.array(importProblemSchema),
                next_after: z.number().int().nullable(),
              }),
            ),
            '400': problem('A bad query parameter.'),
            ...importAuth,
            '404': problem('No such import of this user.'),
          },
        },
      },
      '/api/imports/{id}/resume': {
        post: {
          operationId: 'resumeImport',
          summary:
            'Resume an import that failed or whose instance stopped: it continues after its last committed batch.',
          ...bearer('links:write'),
          parameters: [idParameter('The import id.')],
          responses: {
            '202': ok('The import, queued again.', importSchema),
            ...importAuth,
            '404': problem('No such import of this user.'),
            '409': problem('The import is finished, still receiving its file, or its upload was cut off.'),
          },
        },
      },
      '/{slug}': {
        get: {
          operationId: 'followShortLink',
          summary: 'The short URL: a redirect to its target, counting the click.',
          ...open,
          parameters: [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '302': { description: 'To the target (Location).' },
            '404': { description: 'No such short link (a page).', content: { 'text/html': {} } },
            '503': { description: 'The database is unreachable (a page).', content: { 'text/html': {} } },
          },
        },
      },
      '/.well-known/oauth-protected-resource/api': {
        get: {
          operationId: 'protectedResourceMetadataOfPath',
          summary:
            'RFC 9728 metadata at the path derived from the resource identifier /api: linkauth, the scopes.',
          ...open,
          responses: { '200': ok('The metadata.', metadataSchema) },
        },
      },
      ...(options.mcp ? mcpOpenApiPaths() : {}),
      '/healthz': {
        get: {
          operationId: 'liveness',
          summary: 'Liveness.',
          ...open,
          responses: { '200': ok('Alive.', z.object({ status: z.literal('ok') })) },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          summary: 'Readiness: the database answers; how tokens are verified right now.',
          ...open,
          responses: {
            '200': ok('Ready.', readinessSchema),
            '503': ok('The database is unreachable.', readinessSchema),
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          ...open,
          responses: {
            '200': { description: 'An OpenAPI 3.1 document.', content: { 'application/json': {} } },
          },
        },
      },
    },
  }
}

/** GET /openapi.json: the document, built once. */
export function openApiRoute(document: object) {
  const body = JSON.stringify(document)
  return async (app: FastifyInstance) => {
    app.get('/openapi.json', async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8')
      return body
    })
  }
}
