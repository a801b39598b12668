import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import { publicDocumentCors } from '../web/cors.js'
import { JWKS_MAX_AGE_SECONDS } from './jwks.js'

export function jwksRoutes(services: Pick<Services, 'signingKeys'>) {
  return async (app: FastifyInstance) => {
    publicDocumentCors(app, '/.well-known/jwks.json')
    app.get('/.well-known/jwks.json', async (_request, reply) => {
      const keys = await services.signingKeys.publishedJwks()
      reply
        .header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`)
        .type('application/jwk-set+json; charset=utf-8')
      return { keys }
    })
  }
}
