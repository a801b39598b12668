import { invalidClient, invalidRequest } from '../errors.js'
import { readBasicAuthorization } from '../web/basic-auth.js'
import type { TokenParameters } from '../input/token-parameters.js'

const NO_SECRET =
  'The client is public and has no secret: send client_id alone, or in HTTP Basic with an empty password.'

/**
 * Who the request says it comes from (RFC 6749 §2.3.1, §3.2.1): a public client names itself by
 * client_id in the body, or as the user-id of HTTP Basic with an empty password, which classic
 * libraries send by default. Returns the parameters with client_id taken from whichever carried it.
 * Our clients have no secret, so a password (in Basic, or as client_secret) is failed client
 * authentication: invalid_client, 401 with WWW-Authenticate. A Basic id and a body client_id that
 * differ name two clients in one request: invalid_request.
 */
export function identifyPublicClient(
  authorization: string | undefined,
  params: TokenParameters,
): TokenParameters {
  if (params.client_secret !== undefined) throw invalidClient(NO_SECRET)
  const basic = readBasicAuthorization(authorization)
  if (basic === undefined) return params
  if (basic === 'malformed') throw invalidClient('The HTTP Basic credentials are malformed.')
  if (basic.secret !== '') throw invalidClient(NO_SECRET)
  if (params.client_id !== undefined && params.client_id !== basic.id)
    throw invalidRequest('client_id in the body differs from the one in the Authorization header.')
  return { ...params, client_id: basic.id }
}
