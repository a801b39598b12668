/**
 * The checks of one DPoP proof (RFC 9449 §4.3) against the request it came with, for the
 * authorization server's token endpoint and for resource APIs alike; `ath` and `htu` as the RFC
 * compares them. The key's thumbprint and signature are dpop-proof-key.ts's; the replay state (the
 * store of proofs seen) is dpop-replay-store.ts's; nonces are the caller's (dpop-nonce.ts makes them).
 */
import { base64url, type JWK } from 'jose'
import { createHash } from 'node:crypto'
import { fail, malformed } from './dpop-proof-error.js'
import {
  DEFAULT_DPOP_ALGORITHMS,
  DPOP_ASYMMETRIC_ALGORITHMS,
  type DpopAlgorithm,
  jwkThumbprint,
  unusableKey,
  verifySignature,
} from './dpop-proof-key.js'
import { type DpopReplayStore, DpopReplayStoreFullError } from './dpop-replay-store.js'

/** RFC 9449 §4.2: the `typ` header of a DPoP proof. */
export const DPOP_PROOF_TYPE = 'dpop+jwt'

/** Longer than any proof with an RSA-4096 key; a longer header value is not parsed at all. */
export const MAX_DPOP_PROOF_LENGTH = 4096
/** The protected header (with the key) is the biggest part of a proof; bounded on its own. */
const MAX_HEADER_LENGTH = 2048
const MAX_JTI_LENGTH = 256
const MAX_NONCE_LENGTH = 512
const MAX_HTU_LENGTH = 2048

/** §4.2: members of a private or symmetric JWK; a proof's `jwk` must hold none of them. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const
const KEY_TYPES = new Set(['EC', 'OKP', 'RSA'])

export interface DpopProofCheck {
  /** The request's method as sent (`POST`); compared case-sensitively with `htm`. */
  method: string
  /** The URL the client sent the request to (public scheme, host and path); query and fragment are ignored. */
  url: string | URL
  /** The access token that comes with the request; the proof must then carry its hash in `ath`. */
  accessToken?: string | undefined
  /**
   * When given, the proof must carry a `nonce` this function accepts; otherwise the error is
   * `use_dpop_nonce` and the caller answers with a fresh `DPoP-Nonce` header (§8, §9).
   */
  nonce?: ((nonce: string) => boolean | Promise<boolean>) | undefined
  /** Now, in epoch seconds (a clock of the caller's, for tests); default the system clock. */
  now?: number | undefined
  /** How old `iat` may be (default 60 s). */
  maxAgeSeconds?: number | undefined
  /** How far clocks may disagree, added at both ends of the window (default 10 s). */
  clockSkewSeconds?: number | undefined
  /** The algorithms accepted (default {@link DEFAULT_DPOP_ALGORITHMS}); asymmetric ones only. */
  algorithms?: readonly DpopAlgorithm[] | undefined
  /** Where `jti`s are remembered; see {@link createMemoryReplayStore}. */
  replayStore: DpopReplayStore
}

export interface VerifiedDpopProof {
  /** The RFC 7638 SHA-256 thumbprint of the proof's key, base64url: what `cnf.jkt` and `dpop_jkt` hold. */
  jkt: string
  /** The proof's `iat`, `jti` (as sent) and `nonce` when it had one. */
  iat: number
  jti: string
  nonce?: string | undefined
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
const isText = (v: unknown, max: number): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= max
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

function decodeJson(segment: string): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(segment)))
  } catch {
    throw malformed()
  }
}

/** RFC 3986 §6.2.2.2: percent-encoded unreserved characters decoded, every other triplet in upper case. */
function normalizePercentEncoding(path: string): string {
  return path.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16))
    return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`
  })
}

/**
 * A URL as §4.3 item 9 compares it: scheme and host in lower case, no default port, dot segments
 * removed, an empty path as `/` (WHATWG URL does these, RFC 3986 §6.2.2 and §6.2.3), percent-encoding
 * normalised; no userinfo, query or fragment. Undefined for anything that is not an http(s) URL.
 */
export function normalizeHtu(value: string | URL): string | undefined {
  // Userinfo (`http://user@host/…`, even an empty one) names no request URL: refused, never dropped.
  if (typeof value === 'string' && USERINFO.test(value)) return undefined
  let url: URL
  try {
    url = typeof value === 'string' ? new URL(value) : value
  } catch {
    return undefined
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
  if (url.username !== '' || url.password !== '') return undefined
  return `${url.protocol}//${url.host}${normalizePercentEncoding(url.pathname)}`
}

/** An authority with an `@`: userinfo before the host (WHATWG URL also ends the authority at `\`). */
const USERINFO = /^[a-z][a-z0-9+.-]*:[/\\]*[^/\\?#]*@/i

/** RFC 9449 §4.2: `ath`, the base64url SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url')
}

function checkOptions(check: DpopProofCheck): readonly DpopAlgorithm[] {
  const algorithms = check.algorithms ?? DEFAULT_DPOP_ALGORITHMS
  const allowed: readonly string[] = DPOP_ASYMMETRIC_ALGORITHMS
  if (algorithms.length === 0 || algorithms.some((a) => !allowed.includes(a)))
    throw new TypeError('DPoP algorithms must be a non-empty list of asymmetric JWS algorithms')
  return algorithms
}

/** The proof's header value: one compact JWS, nothing else (§4.3 items 1 and 2). */
function singleProof(proof: unknown): string {
  if (proof === undefined || proof === null || proof === '')
    throw fail('missing_proof', 'A DPoP proof is required.')
  if (Array.isArray(proof) || (typeof proof === 'string' && proof.includes(',')))
    throw fail('multiple_proofs', 'Exactly one DPoP proof must be sent.')
  if (typeof proof !== 'string') throw malformed()
  if (proof.length > MAX_DPOP_PROOF_LENGTH) throw fail('malformed_proof', 'The DPoP proof is too long.')
  const trimmed = proof.trim()
  if (!COMPACT_JWS.test(trimmed)) throw malformed()
  return trimmed
}

/** §4.3 items 4 to 6: typ, an allowed asymmetric alg, a public key of a known type. */
function checkHeader(
  segment: string,
  algorithms: readonly DpopAlgorithm[],
): { alg: DpopAlgorithm; jwk: JWK } {
  if (segment.length > MAX_HEADER_LENGTH) throw fail('malformed_proof', 'The DPoP proof header is too long.')
  const header = decodeJson(segment)
  if (!isObject(header)) throw malformed()
  if (typeof header.typ !== 'string' || header.typ.toLowerCase() !== DPOP_PROOF_TYPE)
    throw fail('wrong_type', 'The DPoP proof must have typ dpop+jwt.')
  const alg = header.alg
  if (typeof alg !== 'string' || !(algorithms as readonly string[]).includes(alg))
    throw fail('unsupported_alg', 'The DPoP proof is signed with an algorithm that is not accepted.')
  // No extension this verifier understands may be marked critical (RFC 7515 §4.1.11).
  if (header.crit !== undefined)
    throw fail('malformed_proof', 'The DPoP proof has unsupported critical headers.')
  const jwk = header.jwk
  if (!isObject(jwk) || typeof jwk.kty !== 'string' || !KEY_TYPES.has(jwk.kty))
    throw fail('invalid_key', 'The DPoP proof must carry a public key in its jwk header.')
  if (PRIVATE_JWK_MEMBERS.some((member) => member in jwk))
    throw fail('private_key', 'The DPoP proof key must not contain private key material.')
  return { alg: alg as DpopAlgorithm, jwk: jwk as JWK }
}

/**
 * Check one DPoP proof against the request it came with (RFC 9449 §4.3): one well-formed JWT,
 * `typ: dpop+jwt`, an allowed asymmetric `alg`, a public `jwk` that verifies the signature, `htm` and
 * `htu` naming this request, `iat` inside the window, `ath` when an access token comes along, the
 * server's `nonce` when the caller asks for one, and a `jti` not seen before (remembered last, so a
 * refused proof never fills the store).
 *
 * @param proof the `DPoP` header value as the framework gives it (a list means several headers: refused)
 * @returns the key's thumbprint `jkt` (RFC 7638) and the proof's `iat`, `jti`, `nonce`
 * @throws DpopProofError for any refused proof (never another error for bad input); the replay
 *   store's own errors pass through unchanged
 */
export async function verifyDpopProof(proof: unknown, check: DpopProofCheck): Promise<VerifiedDpopProof> {
  const algorithms = checkOptions(check)
  const compact = singleProof(proof)
  const [headerSegment, payloadSegment, signature] = compact.split('.') as [string, string, string]
  const { alg, jwk } = checkHeader(headerSegment, algorithms)
  const jkt = jwkThumbprint(jwk)
  if (jkt === undefined) throw unusableKey()
  verifySignature(compact, signature, alg, jwk, jkt)
  const payloadBytes = Buffer.from(payloadSegment, 'base64url')

  let payload: unknown
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payloadBytes))
  } catch {
    throw malformed()
  }
  if (!isObject(payload)) throw malformed()
  const { jti, htm, htu, iat, ath, nonce } = payload
  if (!isText(jti, MAX_JTI_LENGTH) || !isText(htm, 32) || !isText(htu, MAX_HTU_LENGTH))
    throw fail('invalid_claims', 'The DPoP proof lacks jti, htm or htu, or one is not a short string.')
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw fail('invalid_claims', 'The DPoP proof lacks a numeric iat.')

  if (htm !== check.method) throw fail('wrong_method', 'The DPoP proof was made for another HTTP method.')
  const expectedUrl = normalizeHtu(check.url)
  if (expectedUrl === undefined)
    throw new TypeError('The request URL given to verifyDpopProof is not an http(s) URL')
  if (normalizeHtu(htu) !== expectedUrl) throw fail('wrong_url', 'The DPoP proof was made for another URL.')

  const now = check.now ?? Date.now() / 1000
  const maxAge = check.maxAgeSeconds ?? 60
  const skew = check.clockSkewSeconds ?? 10
  if (iat < now - maxAge - skew) throw fail('proof_too_old', 'The DPoP proof is too old.')
  if (iat > now + skew) throw fail('proof_from_future', 'The DPoP proof was issued in the future.')

  if (check.accessToken !== undefined) {
    if (typeof ath !== 'string' || ath !== accessTokenHash(check.accessToken))
      throw fail('wrong_ath', 'The DPoP proof does not match the access token (ath).')
  }
  if (nonce !== undefined && !isText(nonce, MAX_NONCE_LENGTH))
    throw fail('invalid_claims', 'The DPoP proof nonce is not a short string.')
  if (check.nonce !== undefined && (nonce === undefined || !(await check.nonce(nonce))))
    throw fail('nonce_required', 'The authorization server requires a fresh DPoP nonce.')

  // One key's jtis never collide with another's; the hash keeps the store's keys short and fixed.
  const replayKey = createHash('sha256').update(`${jkt}:${jti}`).digest('base64url')
  const expiresAt = Math.ceil(iat + maxAge + skew) + 1
  let fresh: boolean
  try {
    fresh = await check.replayStore.remember(replayKey, expiresAt)
  } catch (err) {
    if (err instanceof DpopReplayStoreFullError)
      throw fail('replay_store_full', 'Too many DPoP proofs are in use right now; send a new one shortly.')
    throw err
  }
  if (!fresh) throw fail('replayed_proof', 'The DPoP proof was already used.')
  return { jkt, iat, jti, nonce: nonce as string | undefined }
}
