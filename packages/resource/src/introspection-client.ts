import { createHash } from 'node:crypto'
import type { AccessTokenClaims } from './jwks-token-verifier.js'
import { invalidToken, VerifierUnavailableError } from './errors.js'
import { basicAuthorization, type Fetch, jsonObject, REQUEST_TIMEOUT_MS } from './http.js'

/** Bounded like the verified-token cache: the oldest answer goes first. */
const CACHE_MAX = 10_000

export interface IntrospectionClientOptions {
  endpoint: URL
  credentials: { id: string; secret: string }
  /** How long an `active: true` answer is reused; never past the token's exp. 0 = every time. */
  cacheSeconds: number
  fetch: Fetch
  now: () => Date
  onError: (err: unknown) => void
}

function sameBinding(answer: Record<string, unknown>, claims: AccessTokenClaims): boolean {
  if (!claims.cnf) return answer.token_type === 'Bearer'
  const cnf = answer.cnf as { jkt?: unknown } | undefined
  return answer.token_type === 'DPoP' && typeof cnf === 'object' && cnf?.jkt === claims.cnf.jkt
}

/**
 * RFC 7662 client: asks the authorization server whether an access token is still active (the
 * revocation check when there is no fresh feed). The token was verified locally first, so only
 * tokens with a valid signature ever cause a call. Only active answers are cached, keyed by the
 * token's hash, so a revocation is seen at the latest `cacheSeconds` later.
 */
export function createIntrospectionClient(options: IntrospectionClientOptions) {
  const activeUntil = new Map<string, number>()
  const authorization = basicAuthorization(options.credentials)
  let calls = 0

  async function ask(token: string): Promise<Record<string, unknown>> {
    calls++
    try {
      const res = await options.fetch(options.endpoint, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      return await jsonObject(res, 'introspection')
    } catch (err) {
      // Unreachable, or our credentials refused (401): either way not the token's fault.
      options.onError(err)
      throw new VerifierUnavailableError()
    }
  }

  function remember(key: string, exp: number): void {
    if (options.cacheSeconds <= 0) return
    const until = Math.min(options.now().getTime() + options.cacheSeconds * 1000, exp * 1000)
    if (activeUntil.size >= CACHE_MAX) activeUntil.delete(activeUntil.keys().next().value!)
    activeUntil.set(key, until)
  }

  return {
    /** Resolves when the token is active and is the one verified locally; throws otherwise. */
    async assertActive(token: string, claims: AccessTokenClaims): Promise<void> {
      const key = createHash('sha256').update(token).digest('base64url')
      const cached = activeUntil.get(key)
      if (cached !== undefined && cached > options.now().getTime()) return
      activeUntil.delete(key)
      const answer = await ask(token)
      // An answer about another token (a refresh token, or a mix-up) does not vouch for this one; a
      // bound token is a DPoP one with the same key (RFC 9449 §6.2), any other a Bearer one.
      if (answer.active !== true || answer.jti !== claims.jti || !sameBinding(answer, claims))
        throw invalidToken('token_inactive', 'The access token is no longer active.')
      remember(key, claims.exp)
    },

    get calls(): number {
      return calls
    },
  }
}

export type IntrospectionClient = ReturnType<typeof createIntrospectionClient>
