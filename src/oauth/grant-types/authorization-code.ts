import { invalidRequest, unknownClient } from '../../errors.js'
import { hasNul } from '../../lib/identifiers.js'
import { isValidCodeVerifier } from '../../lib/pkce.js'
import { requireParameter } from '../../input/token-parameters.js'
import { namedTokenTarget } from '../resource-targets.js'
import { type GrantType, requireClientId, tokenResponse } from './grant-type.js'

/** RFC 6749 §4.1.3 with RFC 7636 §4.5: code + code_verifier + client_id (+ redirect_uri when sent). */
export const authorizationCodeGrant: GrantType = {
  grantType: 'authorization_code',
  async handle(params, services, context) {
    const code = requireParameter(params, 'code')
    const codeVerifier = requireParameter(params, 'code_verifier')
    const clientId = requireClientId(params)
    // A client_id URL the operator's policy no longer accepts (metadata documents turned off, its
    // host denied): its codes are refused as the client is, and stay unused (no database read here).
    if (!services.clients.isAcceptedClientId(clientId)) throw unknownClient()
    // A malformed verifier is a broken request, refused before the code is touched (not burned).
    if (!isValidCodeVerifier(codeVerifier))
      throw invalidRequest('code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_", "~".')
    // No registered redirect URI contains a NUL, and PostgreSQL cannot compare a string that does.
    if (params.redirect_uri !== undefined && hasNul(params.redirect_uri))
      throw invalidRequest('redirect_uri is not the URI the code was issued for.')
    // An unknown or disabled resource is refused before the code is touched (it stays usable).
    const named = await namedTokenTarget(services.resourceServers, params.resource)
    // The client (registered, enabled, its scopes) is checked by the redemption's one statement.
    const issued = await services.grants.redeemAuthorizationCode({
      code,
      codeVerifier,
      clientId,
      redirectUri: params.redirect_uri,
      resource: params.resource,
      dpopJkt: context.dpopJkt,
      from: context.from,
    })
    return tokenResponse(services, issued, named, context)
  },
}
