/**
 * DPoP proofs (RFC 9449): the checks of §4.3 in one place, for the authorization server's token
 * endpoint and for resource APIs alike. `@linkauth/resource/dpop` exports it on its own so that the
 * server needs nothing else of the toolkit.
 *
 * ```ts
 * import { createMemoryReplayStore, DpopProofError, verifyDpopProof } from '@linkauth/resource/dpop'
 *
 * const replayStore = createMemoryReplayStore() // one per process; share a database/Redis one across instances
 * try {
 *   const { jkt } = await verifyDpopProof(request.headers.dpop, {
 *     method: request.method,
 *     url: 'https://api.example.com/links', // the URL the client called, as the client saw it
 *     accessToken, // when a DPoP-bound access token comes with the request (checks `ath`)
 *     replayStore,
 *   })
 *   // a resource API then compares jkt with the token's cnf.jkt (§7.1)
 * } catch (err) {
 *   if (err instanceof DpopProofError) reply.code(400).send(err.toJSON()) // err.error: invalid_dpop_proof | use_dpop_nonce
 *   else throw err // only the replay store's own failure lands here
 * }
 * ```
 */
import { base64url, type JWK } from 'jose'
import { constants, createHash, createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto'

/** RFC 9449 §4.2: the `typ` header of a DPoP proof. */
export const DPOP_PROOF_TYPE = 'dpop+jwt'

/** The asymmetric JWS algorithms a proof may use; `none` and the HMAC ones can never be allowed. */
export const DPOP_ASYMMETRIC_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'PS256',
  'PS384',
  'PS512',
  'RS256',
  'RS384',
  'RS512',
] as const
export type DpopAlgorithm = (typeof DPOP_ASYMMETRIC_ALGORITHMS)[number]

/** Accepted unless the caller narrows them: P-256 ECDSA (what browsers and oauth4webapi use), Ed25519, RSA-PSS. */
export const DEFAULT_DPOP_ALGORITHMS: readonly DpopAlgorithm[] = ['ES256', 'EdDSA', 'Ed25519', 'PS256']

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

/** The RFC 9449 error code a client sees: a bad proof, or "retry with this server nonce" (§8). */
export type DpopErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce'

/** Why a proof is refused, finer than the RFC code and stable, for logs and for callers that switch on it. */
export type DpopFailure =
  | 'missing_proof'
  | 'multiple_proofs'
  | 'malformed_proof'
  | 'wrong_type'
  | 'unsupported_alg'
  | 'invalid_key'
  | 'private_key'
  | 'bad_signature'
  | 'invalid_claims'
  | 'wrong_method'
  | 'wrong_url'
  | 'proof_too_old'
  | 'proof_from_future'
  | 'replayed_proof'
  /** The replay store holds as many unexpired jtis as it may: no new proof until some expire. */
  | 'replay_store_full'
  | 'wrong_ath'
  | 'nonce_required'

/**
 * A refused proof. `error` is the code of RFC 9449 (§5 at the token endpoint: 400 with it as the
 * OAuth `error`; §7.1 at an API: 401 with it in a `WWW-Authenticate: DPoP` challenge); `code` is finer.
 * The description is fixed English text and never holds the proof, the key or the token.
 */
export class DpopProofError extends Error {
  override name = 'DpopProofError'
  readonly error: DpopErrorCode

  constructor(
    readonly code: DpopFailure,
    readonly description: string,
  ) {
    super(description)
    this.error = code === 'nonce_required' ? 'use_dpop_nonce' : 'invalid_dpop_proof'
  }

  toJSON(): { error: DpopErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description }
  }
}

/**
 * Where the `jti`s of accepted proofs are kept for as long as a proof is acceptable (§11.1). It must
 * hold across every instance that accepts proofs for the same URLs (a database table or Redis).
 */
export interface DpopReplayStore {
  /**
   * Remember `key` until `expiresAt` (epoch seconds); true when it was not already there (the proof
   * is new), false when it was (a replay). Atomic: of two concurrent calls with one key, one gets true.
   */
  remember(key: string, expiresAt: number): Promise<boolean>
}

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

const fail = (code: DpopFailure, description: string) => new DpopProofError(code, description)
const malformed = () => fail('malformed_proof', 'The DPoP proof is not a well-formed JWT.')
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

/** RFC 7638 §3.2: the members of each key type its thumbprint covers, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
}

/**
 * The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK of type EC, OKP or RSA: the hash of
 * its required members as JSON, in lexicographic order, without whitespace. Undefined when a
 * required member is missing or not a string.
 */
export function jwkThumbprint(jwk: JWK): string | undefined {
  const members = THUMBPRINT_MEMBERS[jwk.kty ?? '']
  if (!members) return undefined
  const parts: string[] = []
  for (const member of members) {
    const value = (jwk as Record<string, unknown>)[member]
    if (typeof value !== 'string') return undefined
    parts.push(`${JSON.stringify(member)}:${JSON.stringify(value)}`)
  }
  return createHash('sha256')
    .update(`{${parts.join(',')}}`)
    .digest('base64url')
}

/**
 * Each algorithm's digest (null: EdDSA signs the message itself), the key it needs (RFC 7518,
 * RFC 8037), and how node:crypto is to verify with that key (ECDSA signatures are R‖S in JWS; PSS
 * salts as long as the digest).
 */
interface SignatureScheme {
  digest: string | null
  fits(key: KeyObject): boolean
  verifyWith(key: KeyObject): Parameters<typeof verify>[2]
}
const SIGNATURE_SCHEMES: Record<DpopAlgorithm, SignatureScheme> = (() => {
  const ec = (digest: string, curve: string): SignatureScheme => ({
    digest,
    fits: (key) => key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === curve,
    verifyWith: (key) => ({ key, dsaEncoding: 'ieee-p1363' }),
  })
  const eddsa = (...types: string[]): SignatureScheme => ({
    digest: null,
    fits: (key) => types.includes(key.asymmetricKeyType ?? ''),
    verifyWith: (key) => key,
  })
  // RFC 7518 §3.3 and §3.5: RSA keys of 2048 bits or more.
  const rsa = (digest: string, pss: boolean): SignatureScheme => ({
    digest,
    fits: (key) => key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048,
    verifyWith: (key) =>
      pss
        ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
        : key,
  })
  return {
    ES256: ec('sha256', 'prime256v1'),
    ES384: ec('sha384', 'secp384r1'),
    ES512: ec('sha512', 'secp521r1'),
    EdDSA: eddsa('ed25519', 'ed448'),
    Ed25519: eddsa('ed25519'),
    PS256: rsa('sha256', true),
    PS384: rsa('sha384', true),
    PS512: rsa('sha512', true),
    RS256: rsa('sha256', false),
    RS384: rsa('sha384', false),
    RS512: rsa('sha512', false),
  }
})()

const unusableKey = () =>
  fail('invalid_key', 'The DPoP proof key is not a usable public key for its algorithm.')

/**
 * Public keys of recent proofs by thumbprint: a client signs every proof with one key, so its key is
 * parsed once rather than on every request. A thumbprint names the key's every parameter (RFC 7638),
 * so the same thumbprint is the same key. Bounded; cleared when full.
 */
const KEY_CACHE_MAX = 10_000
const keyCache = new Map<string, KeyObject>()

function publicKeyOf(jwk: JWK, jkt: string): KeyObject {
  const cached = keyCache.get(jkt)
  if (cached) return cached
  let key: KeyObject
  try {
    key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
  } catch {
    throw unusableKey()
  }
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear()
  keyCache.set(jkt, key)
  return key
}

/**
 * §4.3 item 7: the signature over `<header>.<payload>` of the compact proof, with node:crypto
 * (synchronous, no key import or WebCrypto round trip per proof).
 */
function verifySignature(
  compact: string,
  signature: string,
  alg: DpopAlgorithm,
  jwk: JWK,
  jkt: string,
): void {
  const scheme = SIGNATURE_SCHEMES[alg]
  const key = publicKeyOf(jwk, jkt)
  if (!scheme.fits(key)) throw unusableKey()
  let valid: boolean
  try {
    const signed = Buffer.from(compact.slice(0, compact.length - signature.length - 1), 'ascii')
    valid = verify(scheme.digest, signed, scheme.verifyWith(key), Buffer.from(signature, 'base64url'))
  } catch {
    valid = false
  }
  if (!valid) throw fail('bad_signature', 'The DPoP proof signature is invalid.')
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

/**
 * Thrown by a replay store that cannot remember one more jti without forgetting one that is still
 * unexpired (which would let that proof be replayed): the proof is refused, `replay_store_full`.
 */
export class DpopReplayStoreFullError extends Error {
  override name = 'DpopReplayStoreFullError'
  constructor() {
    super('the DPoP replay store is full of unexpired jtis')
  }
}

export interface MemoryReplayStoreOptions {
  /**
   * At most this many jtis are held (default 100 000). Expired ones make room; an unexpired one is
   * never forgotten: when all are unexpired a new proof is refused (DpopReplayStoreFullError).
   */
  maxEntries?: number
  /** Epoch seconds now (tests move it); default the system clock. */
  now?: () => number
}

/**
 * A replay store in this process's memory: right for one instance. Several instances behind a load
 * balancer need one store they share, or a proof refused by one is accepted by another.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 100_000
  const clock = options.now ?? (() => Date.now() / 1000)
  const seen = new Map<string, number>()
  let sweptAt = -Infinity
  /**
   * Makes room: the oldest insertions first while they are expired (one window for all, so they are
   * nearly in expiry order), then, at most once a second, the whole map; a flood of new proofs
   * therefore costs no full pass per request.
   */
  const makeRoom = (now: number) => {
    for (const [key, expiresAt] of seen) {
      if (expiresAt > now) break
      seen.delete(key)
    }
    if (seen.size < maxEntries || now - sweptAt < 1) return
    sweptAt = now
    for (const [key, expiresAt] of seen) if (expiresAt <= now) seen.delete(key)
  }
  return {
    remember(key, expiresAt) {
      const now = clock()
      const known = seen.get(key)
      if (known !== undefined && known > now) return Promise.resolve(false)
      if (seen.size >= maxEntries && known === undefined) makeRoom(now)
      if (seen.size >= maxEntries && known === undefined)
        return Promise.reject(new DpopReplayStoreFullError())
      seen.delete(key)
      seen.set(key, expiresAt)
      return Promise.resolve(true)
    },
  }
}
export {
  createDpopNonceSource,
  createRedisReplayStore,
  type DpopNonceOptions,
  type DpopNonceSource,
  type RedisSetNx,
} from './dpop-shared.js'
