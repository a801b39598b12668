import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AccessTokenClaims } from './jwks-token-verifier.js'
import { queryTokenError } from './authorization-header.js'
import { ResourceAuthError, VerifierUnavailableError } from './errors.js'
import type { ResourceVerifier } from './resource-verifier.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scopes a route needs, all of them; `[]` = any valid token. Without it the route is public. */
    scopes?: readonly string[]
  }
  interface FastifyRequest {
    /** The verified access token's claims on a route with `config.scopes`; undefined elsewhere. */
    auth: AccessTokenClaims | undefined
  }
}

export interface LinkauthResourceOptions {
  verifier: ResourceVerifier
  /** The realm of WWW-Authenticate challenges (RFC 6750 §3). */
  realm?: string
}

function refuse(reply: FastifyReply, err: ResourceAuthError, realm: string | undefined): FastifyReply {
  const challenge = err.challenge(realm)
  if (err instanceof VerifierUnavailableError) reply.header('retry-after', String(err.retryAfterSeconds))
  else reply.header('www-authenticate', challenge)
  return reply.code(err.status).header('cache-control', 'no-store').send(err.toJSON())
}

/**
 * Checks the bearer token of every route that declares `config: { scopes: [...] }` in an onRequest
 * hook, so a refused request is answered before its body is read and its handler never runs. The
 * verified claims are `request.auth`. Wrapped in fastify-plugin so the hook and the decorator apply
 * to the routes of the app that registers it.
 */
const plugin: FastifyPluginAsync<LinkauthResourceOptions> = async (app, options) => {
  app.decorateRequest('auth', undefined)
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const scopes = request.routeOptions.config.scopes
    if (scopes === undefined) return
    try {
      const header = request.headers.authorization
      const query = request.query
      if (typeof query === 'object' && query !== null && 'access_token' in query)
        throw queryTokenError(header !== undefined)
      request.auth = await options.verifier.verifyAuthorization(header, scopes)
    } catch (err) {
      if (!(err instanceof ResourceAuthError)) throw err
      return refuse(reply, err, options.realm)
    }
  })
}

export const linkauthResource = fp(plugin, { fastify: '5.x', name: 'linkauth-resource' })
