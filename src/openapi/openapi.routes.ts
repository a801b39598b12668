import type { FastifyInstance } from 'fastify'
import { noAdminToken, open, type Operations, tooManyParameters } from './describe.js'

/** GET /openapi.json: the OpenAPI description of the listener it is registered on, built once. */
export function openApiRoutes(document: object) {
  const body = JSON.stringify(document)
  return async (app: FastifyInstance) => {
    app.get('/openapi.json', async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8')
      return body
    })
  }
}

/** GET /openapi.json in the document it serves: open on the public listener, behind the admin token on the admin one. */
export function openApiOperations(listener: 'public' | 'admin'): Operations {
  return {
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: listener === 'public' ? 'This document.' : 'This document (behind the admin token).',
        ...(listener === 'public' ? open : {}),
        responses: {
          '200': { description: 'An OpenAPI 3.1 document.', content: { 'application/json': {} } },
          '400': tooManyParameters,
          ...(listener === 'admin' ? { '401': noAdminToken } : {}),
        },
      },
    },
  }
}
