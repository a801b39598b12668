import { type ClientStanding, hasAudience } from '@linkauth/resource/token-contract'
import type { Config } from '../config.js'
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
      token_type: 'Bearer' | 'DPoP'
      /** RFC 9449 §6.2: the key a DPoP-bound access token is bound to. */
      cnf?: { jkt: string }
      /** linkauth's member (RFC 7662 §2.2 allows more): the app's standing, as the token carries it. */
      client_standing?: ClientStanding
    }

const INACTIVE = Object.freeze({ active: false as const })

/** A JWT has dots; our refresh tokens (base64url) never do. The hint is only a hint (RFC 7662 §2.1). */
export const looksLikeJwt = (token: string) => token.includes('.')

/** The caller of introspection: a resource server, by its resource (null: the default audience). */
export interface IntrospectionCaller {
  resource: string | null
}

/**
 * token_type: RFC 7662 takes it from RFC 6749 §7.1, where access tokens are "Bearer" (or "DPoP",
 * RFC 9449 §6.2). Only access tokens are ever described: see introspect below.
 */
export function createIntrospectionService(
  config: Pick<Config, 'issuer' | 'accessTokenAudience'>,
  verifier: AccessTokenVerifier,
  accessTokens: Pick<AccessTokenStatusService, 'isAccessTokenLive'>,
  /** Whether the operator's policy still accepts the token's client (client_id URLs; see ClientService). */
  isAcceptedClientId: (clientId: string) => boolean = () => true,
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
    // A metadata-document client the policy no longer accepts: its tokens are inactive while it does not.
    if (!isAcceptedClientId(c.client_id)) return INACTIVE
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
      ...(c.client_standing ? { client_standing: c.client_standing } : {}),
      // RFC 9449 §6.2: a bound token is a DPoP token, and cnf names its key for the caller to check.
      ...(c.cnf ? { token_type: 'DPoP' as const, cnf: c.cnf } : { token_type: 'Bearer' as const }),
    }
  }

  return {
    /**
     * Refresh tokens are for the authorization server alone (RFC 6749 §1.5): a resource API never
     * receives one, so any refresh token it asks about answers `{active: false}`, whatever its
     * audience and whether it is live. Telling a resource server whose refresh token it holds (sub,
     * scope, client_id) would help only someone who should not hold it.
     */
    async introspect(token: string, caller: IntrospectionCaller): Promise<IntrospectionResponse> {
      return looksLikeJwt(token) ? introspectAccessToken(token, caller) : INACTIVE
    },
  }
}

export type IntrospectionService = ReturnType<typeof createIntrospectionService>
