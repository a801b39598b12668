import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { unknownClient } from '../errors.js'
import { assertTokenMediaType, readTokenParameters, requireParameter } from '../input/token-parameters.js'
import { clientEndpointCors } from '../web/cors.js'
import { identifyPublicClient } from './client-identification.js'
import { requireClientId } from './grant-types/grant-type.js'
import type { ClientService } from '../clients/client.service.js'
import type { RevocationService } from './revocation.service.js'
import { noStore } from '../web/no-store.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface RevokeServices {
  clients: ClientService
  revocation: RevocationService
}

/**
 * POST /api/oauth/revoke (RFC 7009). Public clients identify themselves by client_id (in the body or
 * HTTP Basic with an empty password, as at the token endpoint); token_type_hint
 * is read but not needed (the token's shape tells its kind). Every token outcome answers 200 with `{}`:
 * whether a token existed, was expired or belonged to another client is never revealed. RFC 7009
 * §2.2 has the client ignore the body; an empty JSON object rather than no body at all is what
 * clients that insist on a JSON media type (simple-oauth2's revoke()) accept.
 */
export function revokeRoutes(services: RevokeServices, config: Pick<Config, 'issuer'>) {
  return async (app: FastifyInstance) => {
    noStore(app)
    const cors = clientEndpointCors(app, {
      path: '/api/oauth/revoke',
      issuer: config.issuer,
      origins: services.clients,
    })
    app.post('/api/oauth/revoke', async (request, reply) => {
      assertTokenMediaType(request.headers['content-type'])
      const params = identifyPublicClient(request.headers.authorization, readTokenParameters(request.body))
      await cors.assertOriginOf(request, params.client_id)
      const token = requireParameter(params, 'token')
      // As at the token endpoint: no client_id is a missing parameter (invalid_request), one that
      // names no enabled client is failed identification (invalid_client).
      const clientId = requireClientId(params)
      if (!(await services.clients.findActiveClient(clientId))) throw unknownClient()
      await services.revocation.revoke(token, clientId)
      return reply.code(200).send({})
    })
  }
}
