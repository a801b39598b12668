import { performance } from 'node:perf_hooks'
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWK, type JWTVerifyGetKey } from 'jose'
import { type Fetch, jsonObject, REQUEST_TIMEOUT_MS } from './http.js'

/**
 * Asymmetric signature algorithms only: `none` and the HMAC family are never accepted, whatever a
 * token's header or a key set says (a public key must never serve as an HMAC secret).
 */
export const SIGNATURE_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
] as const

/**
 * A key that has left the authorization server's JWKS (retired or removed) stops verifying within
 * this time, whatever is cached: a set older than this is fetched again before any token is checked
 * against it (and a fetch that fails then answers 503, never the old set). The set is refreshed in
 * the background from REFRESH_AFTER_MS on, so a busy API rarely waits.
 */
export const JWKS_MAX_AGE_MS = 5 * 60_000
const REFRESH_AFTER_MS = 60_000

const EC_ALG: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }

/**
 * A key is used only with its own `alg`. A key that names none gets the one its curve implies; an
 * RSA key without `alg` (RS or PS?) and any symmetric or private key are dropped.
 */
function usableKey(jwk: JWK): JWK | undefined {
  if (jwk.d !== undefined || (jwk.use !== undefined && jwk.use !== 'sig')) return undefined
  const alg =
    jwk.alg ??
    (jwk.kty === 'EC' && jwk.crv
      ? EC_ALG[jwk.crv]
      : jwk.kty === 'OKP' && jwk.crv === 'Ed25519'
        ? 'EdDSA'
        : undefined)
  if (alg === undefined || !(SIGNATURE_ALGORITHMS as readonly string[]).includes(alg)) return undefined
  return { ...jwk, alg }
}

export interface JwksCache {
  /** For jose's jwtVerify: the key for a header's kid and alg, refetching the set on an unknown kid. */
  getKey: JWTVerifyGetKey
  /** Loads the set now (at start, so that a wrong jwks_uri fails loudly). */
  load(): Promise<void>
  /**
   * Makes sure the set comes from a fetch started at or after `since` (performance.now() time);
   * false when one already finished, so another cannot help. For a trusted source of kids (the
   * authenticated feed), which needs no floor against made-up ones.
   */
  refetchSince(since: number): Promise<boolean>
  /**
   * A signing key the authorization server revoked (its feed said so): dropped from the set at once,
   * and kept out of every set fetched until `until` (epoch seconds; an HTTP cache may still serve the
   * old set), then the set is fetched again. Tokens it signed fail with unknown_key.
   */
  revokeKey(kid: string, until: number): Promise<void>
  /**
   * Makes sure the set in memory is younger than JWKS_MAX_AGE_MS (fetching it again, awaited, when it
   * is not; in the background once it is older than a minute). Throws when it cannot be fetched.
   */
  ensureFresh(): Promise<void>
  /** Grows when a refetch drops a kid: what was verified with a dropped key must be verified again. */
  readonly generation: number
  readonly fetches: number
}

/**
 * The authorization server's JWKS, cached. A token whose kid is not in the set triggers a refetch
 * (a rotation), but at most one per `refetchFloorMs`, so a stream of tokens with made-up kids cannot
 * turn the resource server into a load generator against the key endpoint (failed attempts count
 * too, so an unreachable server is not hammered either). Concurrent misses share one fetch.
 */
export function createJwksCache(
  jwksUri: URL,
  options: {
    fetch: Fetch
    refetchFloorMs: number
    onError?: (err: unknown) => void
    /** Milliseconds of a monotonic clock (performance.now by default; tests move it). */
    now?: () => number
  },
): JwksCache {
  const now = options.now ?? (() => performance.now())
  let keySet: JWTVerifyGetKey | undefined
  let kids = new Set<string>()
  let fetchedAt = -Infinity
  let attemptedAt = -Infinity
  let inFlight: Promise<void> | undefined
  let generation = 0
  let fetches = 0
  let keys: JWK[] = []
  /** Revoked kids, each until (epoch seconds) the authorization server said. */
  const revoked = new Map<string, number>()

  /** Installs the set: what was fetched, less the revoked keys. */
  function install(fetched: JWK[]): void {
    const now = Date.now() / 1000
    for (const [kid, until] of revoked) if (until <= now) revoked.delete(kid)
    keys = fetched
    const usable = fetched.filter((k) => k.kid === undefined || !revoked.has(k.kid))
    keySet = createLocalJWKSet({ keys: usable } as JSONWebKeySet)
    const next = new Set(usable.flatMap((k) => (k.kid ? [k.kid] : [])))
    if ([...kids].some((kid) => !next.has(kid))) generation++
    kids = next
  }

  async function fetchSet(): Promise<void> {
    fetches++
    attemptedAt = now()
    const res = await options.fetch(jwksUri, {
      headers: { accept: 'application/jwk-set+json, application/json' },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const body = await jsonObject(res, `JWKS at ${jwksUri.href}`)
    if (!Array.isArray(body.keys)) throw new errors.JWKSInvalid('JWKS: no "keys" array')
    install(
      (body.keys as JWK[]).flatMap((k) => {
        const key = typeof k === 'object' && k !== null ? usableKey(k) : undefined
        return key ? [key] : []
      }),
    )
    fetchedAt = now()
  }

  function refresh(): Promise<void> {
    inFlight ??= fetchSet().finally(() => {
      inFlight = undefined
    })
    return inFlight
  }

  /**
   * Makes sure the set in memory comes from a fetch started at or after `since` (performance.now()
   * time), joining one in flight; false when such a fetch has already finished, so fetching again
   * cannot help.
   */
  async function refetchSince(since: number): Promise<boolean> {
    if (inFlight) {
      const started = attemptedAt
      await inFlight.catch(() => {})
      if (started >= since) return true
    } else if (attemptedAt >= since) return false
    await refresh()
    return true
  }

  async function ensureFresh(): Promise<void> {
    const age = now() - fetchedAt
    if (!keySet || age > JWKS_MAX_AGE_MS) await refresh()
    else if (age > REFRESH_AFTER_MS && !inFlight) refresh().catch(options.onError ?? (() => {}))
  }

  const getKey: JWTVerifyGetKey = async (header, token) => {
    await ensureFresh()
    try {
      return await keySet!(header, token)
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err
      if (!(await refetchSince(now() - options.refetchFloorMs))) throw err
      return keySet!(header, token)
    }
  }

  async function revokeKey(kid: string, until: number): Promise<void> {
    revoked.set(kid, Math.max(until, revoked.get(kid) ?? 0))
    install(keys) // at once, before any fetch
    await refetchSince(now()).catch(options.onError ?? (() => {}))
  }

  return {
    getKey,
    load: refresh,
    refetchSince,
    ensureFresh,
    revokeKey,
    get generation() {
      return generation
    },
    get fetches() {
      return fetches
    },
  }
}
