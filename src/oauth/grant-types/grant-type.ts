import { unknownClient } from '../../errors.js'
import { requireParameter, type TokenParameters } from '../../input/token-parameters.js'
import type { IssuedRefreshToken } from '../../grants/grant.service.js'
import { isClientId } from '../../lib/identifiers.js'
import { formatScopes } from '../../lib/scopes.js'
import type { Services } from '../../services.js'

export type TokenServices = Pick<
  Services,
  'clients' | 'grants' | 'refreshTokens' | 'accessTokens' | 'metrics'
>

/** RFC 6749 §5.1. */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

/** One grant type, in the manner of node-oidc-provider's lib/actions/grants/. */
export interface GrantType {
  grantType: string
  handle(params: TokenParameters, services: TokenServices): Promise<TokenResponse>
}

/**
 * client_id, required. One that cannot exist is refused here, before it reaches a query (a NUL byte
 * would make PostgreSQL fail the statement, which must not turn into a 500).
 */
export function requireClientId(params: TokenParameters): string {
  const clientId = requireParameter(params, 'client_id')
  if (!isClientId(clientId)) throw unknownClient()
  return clientId
}

/** Signs the access token for a refresh token just issued and shapes the RFC 6749 §5.1 answer. */
export function tokenResponse(services: TokenServices, issued: IssuedRefreshToken): TokenResponse {
  const access = services.accessTokens.issueAccessToken({
    userId: issued.userId,
    clientId: issued.clientId,
    scopes: issued.scopes,
    grantId: issued.grantId,
    familyId: issued.familyId,
  })
  return {
    access_token: access.accessToken,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
    refresh_token: issued.refreshToken,
    scope: formatScopes(issued.scopes),
  }
}
