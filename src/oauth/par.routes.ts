import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { invalidRequest, OAuthError } from '../errors.js'
import { assertTokenMediaType } from '../input/token-parameters.js'
import { clientEndpointCors } from '../web/cors.js'
import { type ClientService, requestableScopes } from '../clients/client.service.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'
import {
  type RawQuery,
  readClientTarget,
  SINGLE_AUTHORIZATION_PARAMETERS,
  validateAuthorizationParameters,
} from './authorize-request.js'
import { authorizationClient } from './authorization-client.js'
import { noStoreWithDpopNonce } from './client-endpoint-headers.js'
import { identifyPublicClient } from './client-identification.js'
import type { DpopService } from './dpop.service.js'
import type { PushedParameters } from './par.repository.js'
import type { ParService } from './par.service.js'
import { authorizationTargets } from './resource-targets.js'

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface ParServices {
  clients: ClientService
  resourceServers: ResourceServerService
  dpop: DpopService
  par: ParService
}

/** What is kept of a pushed request: the authorization parameters, nothing else (no secret, no unknown name). */
const KEPT = [...SINGLE_AUTHORIZATION_PARAMETERS, 'resource']

/** A form or JSON body as authorization parameters: strings, or lists of strings (a repeated one). */
function readParameters(body: unknown): RawQuery {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalidRequest('The request body must be a set of named parameters.')
  for (const value of Object.values(body)) {
    const values: unknown[] = Array.isArray(value) ? value : [value]
    if (!values.every((v) => typeof v === 'string'))
      throw invalidRequest('Every parameter must be a string (or a repeated one, a list of strings).')
  }
  return body as RawQuery
}

/**
 * POST /api/oauth/par (RFC 9126): a public client pushes its authorization request and gets a
 * short-lived request_uri to send the browser to /oauth/authorize with. The request passes the very
 * checks of GET /oauth/authorize (authorize-request.ts, the client and its exact redirect_uri, the
 * resource indicators), but every refusal is a JSON error here (§2.3): nothing is redirected. A DPoP
 * proof on the request (RFC 9449 §10.1) binds the code to its key, as dpop_jkt does.
 */
export function parRoutes(
  services: ParServices,
  config: Pick<
    Config,
    | 'issuer'
    | 'requireResource'
    | 'clientMetadataScopes'
    | 'dynamicRegistrationScopes'
    | 'clientMetadataDefaultScopes'
    | 'dynamicRegistrationDefaultScopes'
  >,
) {
  return async (app: FastifyInstance) => {
    noStoreWithDpopNonce(app, services.dpop)
    const cors = clientEndpointCors(app, {
      path: '/api/oauth/par',
      issuer: config.issuer,
      origins: services.clients,
    })
    app.post('/api/oauth/par', async (request, reply) => {
      assertTokenMediaType(request.headers['content-type'])
      const body = readParameters(request.body)
      if (body.request_uri !== undefined) throw invalidRequest('A pushed request must not carry request_uri.')
      const { client_id: clientId, client_secret: secret } = body
      if (Array.isArray(clientId)) throw invalidRequest('client_id is repeated.')
      if (Array.isArray(secret)) throw invalidRequest('client_secret is repeated.')
      const identified = identifyPublicClient(request.headers.authorization, {
        client_id: clientId,
        client_secret: secret,
      })
      const params: RawQuery = { ...body, client_id: identified.client_id }
      const target = readClientTarget(params)
      if (!target.ok) throw invalidRequest(target.description)
      await cors.assertOriginOf(request, target.clientId)
      const client = await authorizationClient(services.clients, target, {
        from: request,
        refusedStatus: 401,
      })
      const scopes = requestableScopes(config, client)
      const result = validateAuthorizationParameters(params, {
        ...target,
        allowedScopes: scopes.allowed,
        defaultScopes: scopes.defaults,
      })
      if (!result.ok) throw new OAuthError(result.error, result.description)
      // A request without scope is kept without it: authorize reads the client's defaults again.
      const targets = await authorizationTargets(
        services.resourceServers,
        result.request.resources,
        result.request.scopes,
        { required: config.requireResource, scopesDefaulted: result.scopesDefaulted },
      )
      if (!targets.ok) throw new OAuthError(targets.error, targets.description)
      const proofKey = await services.dpop.pushedRequestKey(request.headers.dpop)
      if (proofKey !== undefined && result.request.dpopJkt !== null && proofKey !== result.request.dpopJkt)
        throw new OAuthError('invalid_dpop_proof', 'dpop_jkt is not the thumbprint of the DPoP proof’s key.')

      const kept: PushedParameters = {}
      for (const name of KEPT) {
        const value = params[name]
        if (value !== undefined) kept[name] = value
      }
      if (proofKey !== undefined) kept.dpop_jkt = proofKey
      return reply.code(201).send(await services.par.push(target.clientId, kept))
    })
  }
}
