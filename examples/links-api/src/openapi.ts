import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { importOpenApiPaths } from './imports/import.openapi.js'
import { linkOpenApiPaths, redirectOpenApiPaths } from './links/link.openapi.js'
import { mcpOpenApiPaths, mcpSecurityScheme } from './mcp/mcp.openapi.js'
import { ok, open, protectedResourceMetadataSchema } from './web/openapi.js'

/**
 * The OpenAPI 3.1 document of the links API: every route it serves, served at GET /openapi.json.
 * Each route group describes its operations beside its routes (links/link.openapi.ts,
 * imports/import.openapi.ts, mcp/mcp.openapi.ts; their shared pieces in web/openapi.ts); this file
 * puts them together with the service's own routes. test/openapi.test.ts checks real answers
 * against it and that every registered route is in it; scripts/lint-openapi.ts lints it with Redocly.
 */

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
      ...linkOpenApiPaths(),
      ...importOpenApiPaths(),
      ...redirectOpenApiPaths(),
      '/.well-known/oauth-protected-resource/api': {
        get: {
          operationId: 'protectedResourceMetadataOfPath',
          summary:
            'RFC 9728 metadata at the path derived from the resource identifier /api: linkauth, the scopes.',
          ...open,
          responses: { '200': ok('The metadata.', protectedResourceMetadataSchema) },
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
