import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { assertTokenMediaType, readTokenParameters } from '../input/token-parameters.js'
import { clientEndpointCors } from '../web/cors.js'
import type { ClientService } from '../clients/client.service.js'
import { identifyPublicClient } from './client-identification.js'
import type { DeviceAuthorizationService } from './device-authorization.service.js'
import { requireClientId } from './grant-types/grant-type.js'
import { noStore } from '../web/no-store.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface DeviceAuthorizationServices {
  clients: ClientService
  deviceAuthorizations: DeviceAuthorizationService
}

/**
 * POST /api/oauth/device_authorization (RFC 8628 §3.1): a public client (client_id in the body or
 * HTTP Basic with an empty password), `scope` and one `resource`; the answer carries the device code,
 * the user code and where the person enters it (§3.2).
 */
export function deviceAuthorizationRoutes(
  services: DeviceAuthorizationServices,
  config: Pick<Config, 'issuer'>,
) {
  return async (app: FastifyInstance) => {
    noStore(app)
    const cors = clientEndpointCors(app, {
      path: '/api/oauth/device_authorization',
      issuer: config.issuer,
      origins: services.clients,
    })
    app.post('/api/oauth/device_authorization', async (request) => {
      assertTokenMediaType(request.headers['content-type'])
      const params = identifyPublicClient(request.headers.authorization, readTokenParameters(request.body))
      await cors.assertOriginOf(request, params.client_id)
      const clientId = requireClientId(params)
      return services.deviceAuthorizations.start(params, clientId, request)
    })
  }
}
