import type { RefreshTokenService } from '../grants/refresh-token.service.js'
import type { AccessTokenStatusService } from '../tokens/access-token-status.service.js'
import type { AccessTokenVerifier } from '../tokens/access-token-verifier.js'
import { looksLikeJwt } from './introspection.service.js'

/**
 * RFC 7009 §2.1 for an identified client. Every outcome the caller may learn is the same (200):
 * unknown, malformed, expired or another client's tokens are left alone without saying so.
 */
export function createRevocationService(
  verifier: AccessTokenVerifier,
  accessTokens: Pick<AccessTokenStatusService, 'denyAccessToken'>,
  refreshTokens: Pick<RefreshTokenService, 'revokeRefreshTokenFamily'>,
) {
  /** A JWT we signed, unexpired and issued to this client: deny-list its jti until its exp. */
  async function revokeAccessToken(token: string, clientId: string): Promise<void> {
    const verified = await verifier.verify(token)
    if (!verified.ok || verified.claims.client_id !== clientId) return
    await accessTokens.denyAccessToken(verified.claims.jti, new Date(verified.claims.exp * 1000))
  }

  return {
    /**
     * The token's kind is read from its shape (a JWT has dots; a refresh token never does), which
     * searches "across all supported token types" (§2.1) whatever the hint says.
     */
    async revoke(token: string, clientId: string): Promise<void> {
      if (looksLikeJwt(token)) await revokeAccessToken(token, clientId)
      else await refreshTokens.revokeRefreshTokenFamily(token, clientId)
    },
  }
}

export type RevocationService = ReturnType<typeof createRevocationService>
