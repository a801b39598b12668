import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { OAuthError, invalidRequest } from '../errors.js'
import { assertTokenMediaType, readTokenParameters, type TokenParameters } from '../input/token-parameters.js'
import { clientEndpointCors } from '../web/cors.js'
import { noStoreWithDpopNonce } from './client-endpoint-headers.js'
import { identifyPublicClient } from './client-identification.js'
import { authorizationCodeGrant } from './grant-types/authorization-code.js'
import type { GrantType, TokenServices } from './grant-types/grant-type.js'
import { deviceCodeGrant } from './grant-types/device-code.js'
import { traceRequest } from '../tracing/request-span.js'
import { refreshTokenGrant } from './grant-types/refresh-token.js'

const GRANTS = new Map<string, GrantType>(
  [authorizationCodeGrant, refreshTokenGrant, deviceCodeGrant].map((g) => [g.grantType, g]),
)

export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()]

/** DESIGN §3: a request with a code and no grant_type is an authorization_code request. */
function grantFor(params: TokenParameters): GrantType {
  const grantType = params.grant_type ?? (params.code !== undefined ? 'authorization_code' : undefined)
  if (grantType === undefined) throw invalidRequest('grant_type is required.')
  const grant = GRANTS.get(grantType)
  if (!grant)
    throw new OAuthError('unsupported_grant_type', `Supported: ${SUPPORTED_GRANT_TYPES.join(', ')}.`)
  return grant
}

/** POST /api/oauth/token (RFC 6749 §3.2): read the parameters, pick the grant type, let it answer. */
export function tokenRoutes(services: TokenServices, config: Pick<Config, 'issuer'>) {
  return async (app: FastifyInstance) => {
    noStoreWithDpopNonce(app, services.dpop)
    const cors = clientEndpointCors(app, {
      path: '/api/oauth/token',
      issuer: config.issuer,
      origins: services.clients,
    })
    app.post('/api/oauth/token', async (request) => {
      assertTokenMediaType(request.headers['content-type'])
      const params = identifyPublicClient(request.headers.authorization, readTokenParameters(request.body))
      await cors.assertOriginOf(request, params.client_id)
      const grant = grantFor(params)
      traceRequest(request, { 'linkauth.grant_type': grant.grantType })
      // A bad proof is refused before the grant is touched: the code or refresh token stays usable.
      const dpopJkt = await services.dpop.tokenRequestKey(request.headers.dpop)
      const answer = await grant.handle(params, services, { dpopJkt, from: request })
      services.metrics.tokensIssued.inc({ grant_type: grant.grantType })
      traceRequest(request, { 'linkauth.outcome': 'success' })
      return answer
    })
  }
}
