import type { FastifyInstance } from 'fastify'
import { invalidClient, unknownClient } from '../errors.js'
import type { Services } from '../services.js'
import { assertTokenMediaType, readTokenParameters, requireParameter } from '../input/token-parameters.js'

/**
 * POST /api/oauth/revoke (RFC 7009). Public clients identify themselves by client_id; token_type_hint
 * is read but not needed (the token's shape tells its kind). Every token outcome answers 200 with an
 * empty body: whether a token existed, was expired or belonged to another client is never revealed.
 */
export function revokeRoutes(services: Pick<Services, 'clients' | 'revocation'>) {
  return async (app: FastifyInstance) => {
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
    })
    app.post('/api/oauth/revoke', async (request, reply) => {
      assertTokenMediaType(request.headers['content-type'])
      const params = readTokenParameters(request.body)
      const token = requireParameter(params, 'token')
      const clientId = params.client_id
      if (clientId === undefined) throw invalidClient('client_id is required to identify the client.')
      if (!(await services.clients.findActiveClient(clientId))) throw unknownClient()
      await services.revocation.revoke(token, clientId)
      return reply.code(200).send()
    })
  }
}
