import type { FastifyInstance } from 'fastify'

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
