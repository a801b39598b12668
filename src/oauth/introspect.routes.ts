import type { FastifyInstance } from 'fastify'
import { identifyResourceServer } from '../resource-servers/resource-server-auth.js'
import { assertTokenMediaType, readTokenParameters, requireParameter } from '../input/token-parameters.js'
import type { IntrospectionService } from './introspection.service.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'
import { noStore } from '../web/no-store.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface IntrospectServices {
  resourceServers: ResourceServerService
  introspection: IntrospectionService
}

/**
 * POST /api/oauth/introspect (RFC 7662). The caller is a registered resource server with HTTP Basic
 * credentials; a failure is 401 invalid_client with WWW-Authenticate (set by the error handler).
 * token_type_hint is accepted and not needed: the token's shape tells its kind.
 */
export function introspectRoutes(services: IntrospectServices) {
  return async (app: FastifyInstance) => {
    noStore(app)
    app.post('/api/oauth/introspect', async (request) => {
      const caller = await identifyResourceServer(request.headers.authorization, services.resourceServers)
      assertTokenMediaType(request.headers['content-type'])
      const token = requireParameter(readTokenParameters(request.body), 'token')
      return services.introspection.introspect(token, caller)
    })
  }
}
