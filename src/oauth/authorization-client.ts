import type { FastifyRequest } from 'fastify'
import { OAuthError } from '../errors.js'
import {
  type Client,
  ClientRefused,
  type ClientService,
  ClientUnavailable,
} from '../clients/client.service.js'
import { redirectUriMatches } from '../clients/redirect-uri.js'
import { standingOf } from '../clients/standing.js'
import { traceRequest } from '../tracing/request-span.js'

/**
 * The registered, enabled client (a client_id URL's document read or refreshed when `from` is
 * given), when `redirectUri` is one of its own (exact string match): shared by the authorization
 * endpoint, which shows refusals as pages (400), and the PAR endpoint, which answers invalid_client
 * with 401 (RFC 9126 §2.3, RFC 6749 §5.2).
 */
export async function authorizationClient(
  clients: Pick<ClientService, 'resolveForAuthorization'>,
  target: { clientId: string; redirectUri: string },
  options: { from?: FastifyRequest | undefined; refusedStatus: 400 | 401 },
): Promise<Client> {
  const client = await clients
    .resolveForAuthorization(target.clientId, options.from)
    .catch((err: unknown) => {
      if (err instanceof ClientRefused)
        throw new OAuthError('invalid_client', err.message, options.refusedStatus)
      if (err instanceof ClientUnavailable) throw new OAuthError('temporarily_unavailable', err.message)
      throw err
    })
  if (options.from) traceRequest(options.from, { 'linkauth.client.standing': standingOf(client) })
  if (!redirectUriMatches(client.redirectUris, target.redirectUri)) {
    throw new OAuthError('invalid_request', 'This redirect_uri is not registered for the application.')
  }
  return client
}
