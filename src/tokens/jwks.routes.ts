import type { FastifyInstance } from 'fastify'
import { publicDocumentCors } from '../web/cors.js'
import { JWKS_MAX_AGE_SECONDS, matchesIfNoneMatch } from './jwks.js'
import type { SigningKeyService } from './signing-key.service.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface JwksServices {
  signingKeys: SigningKeyService
}

export function jwksRoutes(services: JwksServices) {
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
