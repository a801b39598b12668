import type { AccessTokenClaims } from './jwks-token-verifier.js'

/** What a revocation event names; an access token carries one claim of each. */
export type RevokedKind = 'grant_id' | 'family_id' | 'jti' | 'client_id'

const KINDS: readonly RevokedKind[] = ['grant_id', 'family_id', 'jti', 'client_id']

/**
 * Ids revoked by the authorization server, each kept until its `until` (epoch seconds): after that no
 * token it covers can still be valid, so it is forgotten and the set stays as small as the number of
 * revocations inside one access-token lifetime.
 */
export function createRevocationSet(nowSeconds: () => number) {
  const revoked = new Map<string, number>()
  const key = (kind: RevokedKind, id: string) => `${kind}:${id}`

  function forgetExpired(): void {
    const now = nowSeconds()
    for (const [k, until] of revoked) if (until <= now) revoked.delete(k)
  }

  return {
    add(kind: RevokedKind, id: string, until: number): void {
      if (until <= nowSeconds()) return
      const k = key(kind, id)
      revoked.set(k, Math.max(until, revoked.get(k) ?? 0))
    },

    /** The claim by which the token is revoked, or undefined. */
    revokedBy(claims: AccessTokenClaims): RevokedKind | undefined {
      const now = nowSeconds()
      return KINDS.find((kind) => (revoked.get(key(kind, claims[kind])) ?? 0) > now)
    },

    forgetExpired,

    get size(): number {
      forgetExpired()
      return revoked.size
    },
  }
}

export type RevocationSet = ReturnType<typeof createRevocationSet>
