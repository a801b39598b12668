import { conversionOpenApiPaths } from './conversions/conversion.openapi.js'
import { linkOpenApiPaths, redirectOpenApiPaths } from './links/link.openapi.js'
import { productOpenApiPaths, SYNC } from './products/product.openapi.js'
import { ECOM, type Json, json } from './web/openapi.js'

/**
 * The commerce API's OpenAPI 3.1 document, served at GET /openapi.json. Each route group describes
 * its operations and schemas beside its routes (products/product.openapi.ts, links/link.openapi.ts,
 * conversions/conversion.openapi.ts; their shared pieces in web/openapi.ts); this file puts them
 * together with the service's own routes. Its response schemas are checked against the API's real
 * answers (test/openapi.test.ts) and it passes Redocly's recommended rules.
 */

const verification = { type: 'object' }
const Health: Json = { type: 'object', required: ['status'], properties: { status: { type: 'string' } } }

const Ready: Json = {
  type: 'object',
  required: ['status', 'verification'],
  properties: { status: { type: 'string' }, reason: { type: 'string' }, verification },
}

export function commerceOpenApiDocument(options: { publicUrl: string; resource: string; issuer: string }) {
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
      ...productOpenApiPaths(),
      ...linkOpenApiPaths(),
      ...conversionOpenApiPaths(),
      ...redirectOpenApiPaths(),
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
            '200': { description: 'The process runs.', content: json(Health) },
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
            '200': { description: 'Ready, with how tokens are verified.', content: json(Ready) },
            '503': { description: 'The database is unavailable.', content: json(Ready) },
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
