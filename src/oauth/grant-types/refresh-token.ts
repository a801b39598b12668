import { invalidScope, OAuthError, unknownClient } from '../../errors.js'
import { isKnownScope, parseScopeParameter } from '../../lib/scopes.js'
import { requireParameter, type TokenParameters } from '../../input/token-parameters.js'
import { namedTokenTarget } from '../resource-targets.js'
import { type GrantType, requireClientId, tokenResponse } from './grant-type.js'

function requestedScopes(params: TokenParameters): string[] | undefined {
  if (params.scope === undefined) return undefined
  const scopes = parseScopeParameter(params.scope)
  if (!scopes) throw invalidScope('scope must be space-separated scope names.')
  if (!scopes.every(isKnownScope)) throw invalidScope('scope names an unknown scope.')
  return scopes
}

/**
 * RFC 6749 §6: refresh_token + client_id (+ a narrower scope), rotating the token. `resource` may name
 * any API of the authorization (RFC 8707 §2.2): one refresh token serves each of them in turn.
 */
export const refreshTokenGrant: GrantType = {
  grantType: 'refresh_token',
  async handle(params, services, context) {
    const refreshToken = requireParameter(params, 'refresh_token')
    const clientId = requireClientId(params)
    // A client_id URL the operator's policy no longer accepts: refused before rotating, so the
    // family is not spent and works again if the operator turns the door back on.
    if (!services.clients.isAcceptedClientId(clientId)) throw unknownClient()
    const scopes = requestedScopes(params)
    // Looked up before rotating, so an unknown or disabled resource leaves the token unused.
    const named = await namedTokenTarget(services.resourceServers, params.resource, scopes)
    try {
      const issued = await services.refreshTokens.rotateRefreshToken({
        refreshToken,
        clientId,
        scopes,
        resource: params.resource,
        dpopJkt: context.dpopJkt,
        from: context.from,
      })
      return await tokenResponse(services, issued, named, context)
    } catch (err) {
      // The client is looked up only on failure: a disabled client's grants are already revoked,
      // and a token only rotates for the client it was issued to, so the success path saves a
      // round trip. Here we tell an unknown or disabled client (invalid_client) from a bad token.
      if (err instanceof OAuthError && !(await services.clients.findActiveClient(clientId)))
        throw unknownClient()
      throw err
    }
  },
}
