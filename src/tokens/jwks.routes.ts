import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import { publicDocumentCors } from '../web/cors.js'
import { JWKS_MAX_AGE_SECONDS, matchesIfNoneMatch } from './jwks.js'

export function jwksRoutes(services: Pick<Services, 'signingKeys'>) {
  return async (app: FastifyInstance) => {
    publicDocumentCors(app, '/.well-known/jwks.json')
    app.get('/.well-known/jwks.json', async (request, reply) => {
      // From memory (jwks.ts): no query per request.
      const { body, etag } = await services.signingKeys.jwksDocument()
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`).header('etag', etag)
      if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send()
      return reply.type('application/jwk-set+json; charset=utf-8').send(body)
    })
  }
}
