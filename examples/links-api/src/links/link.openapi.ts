import { z } from 'zod'
import {
  bearer,
  error,
  idParameter,
  isoTime,
  jsonBody,
  noToken,
  ok,
  open,
  wrongScope,
} from '../web/openapi.js'
import { MAX_SEARCH_LENGTH } from './link-input.js'

/** The link routes (link.routes.ts) and the short URL (redirect.routes.ts) in the OpenAPI document. */

/** A link's JSON (linkJson), described; also the MCP tools' output schema. */
export const linkSchema = z.object({
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

/** A link's statistics (statsJson), described; also link_stats' output schema. */
export const statsSchema = z.object({
  link_id: z.string(),
  from: z.string(),
  to: z.string(),
  total_clicks: z.number().int(),
  clicks_in_range: z.number().int(),
  days: z.array(z.object({ date: z.string(), clicks: z.number().int() })),
})

const badInput = error('invalid_request: a field breaks a rule; the description names it.')
const unavailable = error('The database is unreachable; retry after Retry-After seconds.')
const notFound = error('not_found: no such link of this user.')

export function linkOpenApiPaths() {
  return {
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
          '429': error(
            'app_limit_reached: this application made as many new links for this person this hour as its standing allows (`client_standing`: unverified 50, vouched 500 by default; verified apps are not limited). `retry_after` (seconds, also the Retry-After header) and `retry_at` say when to try again; `limit`, `window_seconds` and `client_standing` say why.',
          ),
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
          '404': notFound,
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
          '404': notFound,
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
          '404': notFound,
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
          '404': notFound,
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
  }
}

/** GET /{slug} (redirect.routes.ts): a page, not JSON, and no token. */
export function redirectOpenApiPaths() {
  return {
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
  }
}
