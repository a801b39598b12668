import { hasAudience } from '@linkauth/resource/token-contract'
import type { Config } from '../config.js'
import type { RefreshTokenService } from '../grants/refresh-token.service.js'
import { epochSeconds } from '../lib/clock.js'
import type { AccessTokenStatusService } from '../tokens/access-token-status.service.js'
import type { AccessTokenVerifier } from '../tokens/access-token-verifier.js'

/** RFC 7662 §2.2. Inactive tokens answer `{active: false}` and nothing else, whatever the reason. */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true
      scope: string
      client_id: string
      sub: string
      exp: number
      iat: number
      iss: string
      aud?: string | string[]
      jti?: string
      token_type: 'Bearer' | 'DPoP' | 'refresh_token'
      /** RFC 9449 §6.2: the key a DPoP-bound access token is bound to. */
      cnf?: { jkt: string }
    }

const INACTIVE = Object.freeze({ active: false as const })

/** A JWT has dots; our refresh tokens (base64url) never do. The hint is only a hint (RFC 7662 §2.1). */
export const looksLikeJwt = (token: string) => token.includes('.')

/** The caller of introspection: a resource server, by its resource (null: the default audience). */
export interface IntrospectionCaller {
  resource: string | null
}

/**
 * token_type: RFC 7662 takes it from RFC 6749 §7.1, where access tokens are "Bearer". Refresh
 * tokens have no §7.1 type, so they answer "refresh_token" (their RFC 7009 token_type_hint name):
 * never "Bearer", so that a resource server that checks token_type cannot mistake one for the other.
 */
export function createIntrospectionService(
  config: Pick<Config, 'issuer' | 'accessTokenAudience'>,
  verifier: AccessTokenVerifier,
  accessTokens: Pick<AccessTokenStatusService, 'isAccessTokenLive'>,
  refreshTokens: Pick<RefreshTokenService, 'findLiveRefreshToken'>,
) {
  async function introspectAccessToken(
    token: string,
    caller: IntrospectionCaller,
  ): Promise<IntrospectionResponse> {
    const verified = await verifier.verify(token)
    if (!verified.ok) return INACTIVE
    const c = verified.claims
    // Before the liveness query: a token for another API costs the caller no database round trip.
    // RFC 8707, RFC 7662 §4: a token is the caller's when its audience is, or lists, the caller's
    // resource (the default audience for a caller registered without one): the rule of the APIs'
    // own verifiers (RFC 9068 §4). A token named for another API alone lists nobody else.
    if (!hasAudience(c.aud, caller.resource ?? config.accessTokenAudience)) return INACTIVE
    const live = await accessTokens.isAccessTokenLive({
      jti: c.jti,
      grantId: c.grant_id,
      familyId: c.family_id,
      clientId: c.client_id,
      userId: c.sub,
    })
    if (!live) return INACTIVE
    return {
      active: true,
      scope: c.scope,
      client_id: c.client_id,
      sub: c.sub,
      exp: c.exp,
      iat: c.iat,
      iss: c.iss,
      aud: c.aud,
      jti: c.jti,
      // RFC 9449 §6.2: a bound token is a DPoP token, and cnf names its key for the caller to check.
      ...(c.cnf ? { token_type: 'DPoP' as const, cnf: c.cnf } : { token_type: 'Bearer' as const }),
    }
  }

  async function introspectRefreshToken(token: string): Promise<IntrospectionResponse> {
    const live = await refreshTokens.findLiveRefreshToken(token)
    if (!live) return INACTIVE
    return {
      active: true,
      scope: live.scopes.join(' '),
      client_id: live.clientId,
      sub: live.userId,
      exp: epochSeconds(live.expiresAt),
      iat: epochSeconds(live.issuedAt),
      iss: config.issuer,
      token_type: 'refresh_token',
    }
  }

  return {
    /**
     * Refresh tokens are the client's, never presented to an API, and carry no audience: they are
     * described to any authenticated resource server as before.
     */
    introspect(token: string, caller: IntrospectionCaller): Promise<IntrospectionResponse> {
      return looksLikeJwt(token) ? introspectAccessToken(token, caller) : introspectRefreshToken(token)
    },
  }
}

export type IntrospectionService = ReturnType<typeof createIntrospectionService>
