import type { RequestFacts } from '../../audit/audit.service.js'
import { invalidClient, unknownClient } from '../../errors.js'
import { requireParameter, type TokenParameters } from '../../input/token-parameters.js'
import type { IssuedRefreshToken, GrantService } from '../../grants/grant.service.js'
import { CLIENT_ID_URL_NOT_HTTPS, isClientId, isNonHttpsClientIdUrl } from '../../lib/identifiers.js'
import { formatScopes } from '../../lib/scopes.js'
import type { ResourceTarget, TokenAudiences } from '../resource-targets.js'
import type { AccessTokenService } from '../../tokens/access-token.js'
import type { ClientService } from '../../clients/client.service.js'
import type { DpopService } from '../dpop.service.js'
import type { DeviceAuthorizationService } from '../device-authorization.service.js'
import type { Metrics } from '../../metrics/metrics.js'
import type { RefreshTokenService } from '../../grants/refresh-token.service.js'
import { traceRequest } from '../../tracing/request-span.js'
import type { ResourceServerService } from '../../resource-servers/resource-server.service.js'

/** What the token endpoint and its grant types use, handed in by the composition root (DESIGN §2). */
export interface TokenServices {
  clients: ClientService
  grants: GrantService
  refreshTokens: RefreshTokenService
  accessTokens: AccessTokenService
  metrics: Metrics
  resourceServers: ResourceServerService
  tokenAudiences: TokenAudiences
  dpop: DpopService
  deviceAuthorizations: Pick<DeviceAuthorizationService, 'poll'>
}

/** What the token request proved beyond its parameters. */
export interface TokenRequestContext {
  /** RFC 9449: the thumbprint of the key of the request's valid DPoP proof; undefined without one. */
  dpopJkt?: string | undefined
  /** The HTTP request, for the audit rows of a replay or a reuse. */
  from?: RequestFacts | undefined
}

/** RFC 6749 §5.1; token_type DPoP (RFC 9449 §5) when the access token is bound to a key. */
export interface TokenResponse {
  access_token: string
  token_type: 'Bearer' | 'DPoP'
  expires_in: number
  refresh_token: string
  scope: string
}

/** One grant type, in the manner of node-oidc-provider's lib/actions/grants/. */
export interface GrantType {
  grantType: string
  handle(
    params: TokenParameters,
    services: TokenServices,
    context: TokenRequestContext,
  ): Promise<TokenResponse>
}

/**
 * client_id, required. One that cannot exist is refused here, before it reaches a query (a NUL byte
 * would make PostgreSQL fail the statement, which must not turn into a 500).
 */
export function requireClientId(params: TokenParameters): string {
  const clientId = requireParameter(params, 'client_id')
  if (!isClientId(clientId))
    throw isNonHttpsClientIdUrl(clientId) ? invalidClient(CLIENT_ID_URL_NOT_HTTPS) : unknownClient()
  return clientId
}

/**
 * Signs the access token for a refresh token just issued and shapes the RFC 6749 §5.1 answer. With
 * resource indicators the token is for one API (RFC 8707 §2.2): `aud` is its identifier and `scope`
 * (the token's and the answer's) what the grant holds of that API's scopes; the refresh token keeps
 * the grant's. Without, it is for every API serving its scopes (TokenAudiences). If no token can be
 * issued (the API is disabled, or serves none of these scopes since; REQUIRE_RESOURCE and none
 * named), the refresh token just issued is revoked with its family: nobody will ever receive it.
 */
export async function tokenResponse(
  services: TokenServices,
  issued: IssuedRefreshToken,
  named?: ResourceTarget,
  context: TokenRequestContext = {},
): Promise<TokenResponse> {
  const { audience, scopes } = await services.tokenAudiences
    .audienceOf(named, issued.resources, issued.scopes, issued.servingResources)
    .catch(async (err: unknown) => {
      await services.refreshTokens.revokeRefreshTokenFamily(issued.refreshToken, issued.clientId)
      throw err
    })
  if (context.from) traceRequest(context.from, { 'linkauth.client.standing': issued.clientStanding })
  const access = services.accessTokens.issueAccessToken({
    userId: issued.userId,
    clientId: issued.clientId,
    scopes,
    grantId: issued.grantId,
    familyId: issued.familyId,
    audience,
    dpopJkt: context.dpopJkt,
    clientStanding: issued.clientStanding,
  })
  return {
    access_token: access.accessToken,
    token_type: context.dpopJkt === undefined ? 'Bearer' : 'DPoP',
    expires_in: access.expiresIn,
    refresh_token: issued.refreshToken,
    scope: formatScopes(scopes),
  }
}
