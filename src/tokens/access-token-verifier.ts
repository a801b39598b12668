import { verify } from 'node:crypto'
import type { Config } from '../config.js'
import {
  type AccessTokenFailure,
  isAccessTokenType,
  readAccessTokenClaims,
  type SignedAccessTokenClaims,
} from '@linkauth/resource/token-contract'
import { type Clock, epochSeconds } from '../lib/clock.js'
import type { VerificationKey } from './verification-key.js'

/** The contract's claims, `cnf` (RFC 9449 §6.1) among them when the token is bound to a DPoP key. */
export type VerifiedAccessTokenClaims = SignedAccessTokenClaims

export type AccessTokenVerification =
  | { ok: true; claims: VerifiedAccessTokenClaims }
  | { ok: false; reason: AccessTokenFailure; claims?: VerifiedAccessTokenClaims }

export interface VerificationKeys {
  verificationKey(kid: string): Promise<VerificationKey | undefined>
  /**
   * Whether tokens of a kid remembered as verified are still trusted: false once the key is revoked,
   * or retired past the JWKS cut-off (its kid gone from the JWKS), or forgotten.
   */
  isTrusted?(kid: string): boolean
}

/** Far longer than any access token we sign; a longer string is not worth parsing. */
const MAX_TOKEN_LENGTH = 4096

/**
 * Resource servers introspect the same token on every API call, and an ECDSA verify is by far the
 * largest CPU cost of introspection. A token string whose signature, header, shape and issuer were
 * checked once is remembered (the whole string is the key, so nothing unverified can match); its
 * exp is still checked on every call. Bounded: the oldest entry goes first.
 */
const VERIFIED_CACHE_MAX = 10_000

function decodeJson(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0

function isValidSignature(key: VerificationKey, signingInput: string, signature: string): boolean {
  try {
    return verify(
      key.alg === 'EdDSA' ? null : 'sha256',
      Buffer.from(signingInput),
      { key: key.publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    )
  } catch {
    return false // a signature of the wrong length or encoding
  }
}

/**
 * Verifies an access token locally (RFC 9068 §4): compact JWS, typ at+jwt, a kid of one of our
 * published keys with its alg, a valid signature, our iss, and exp in the future. Keys come from
 * memory as KeyObjects (the signing-key set, signing-key-set.ts); a known kid never asks the database,
 * an unknown one of the right shape costs a check of the key set's state, shared by concurrent callers.
 * node:crypto rather than jose: the same choice as signing (see access-token.ts), measured in bench/.
 */
export function createAccessTokenVerifier(
  config: Pick<Config, 'issuer'>,
  clock: Clock,
  keys: VerificationKeys,
  options: { cacheSize?: number } = {},
) {
  const cacheSize = options.cacheSize ?? VERIFIED_CACHE_MAX
  const verified = new Map<string, { claims: VerifiedAccessTokenClaims; kid: string }>()

  function remember(token: string, claims: VerifiedAccessTokenClaims, kid: string): void {
    if (cacheSize <= 0) return
    if (verified.size >= cacheSize) verified.delete(verified.keys().next().value!)
    verified.set(token, { claims, kid })
  }

  function checkExpiry(claims: VerifiedAccessTokenClaims): AccessTokenVerification {
    if (claims.exp <= epochSeconds(clock.now())) return { ok: false, reason: 'token_expired', claims }
    return { ok: true, claims }
  }

  return {
    async verify(token: string): Promise<AccessTokenVerification> {
      const known = verified.get(token)
      if (known) {
        if (keys.isTrusted && !keys.isTrusted(known.kid)) return { ok: false, reason: 'unknown_key' }
        return checkExpiry(known.claims)
      }
      if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'malformed_token' }
      const parts = token.split('.')
      if (parts.length !== 3) return { ok: false, reason: 'malformed_token' }
      const [headerPart, payloadPart, signaturePart] = parts as [string, string, string]
      const header = decodeJson(headerPart)
      if (!header || !isString(header.kid) || !isString(header.alg))
        return { ok: false, reason: 'malformed_token' }
      if (!isAccessTokenType(header.typ)) return { ok: false, reason: 'wrong_type' }
      const key = await keys.verificationKey(header.kid)
      if (!key) return { ok: false, reason: 'unknown_key' }
      if (key.alg !== header.alg) return { ok: false, reason: 'bad_signature' }
      if (!isValidSignature(key, `${headerPart}.${payloadPart}`, signaturePart))
        return { ok: false, reason: 'bad_signature' }
      const payload = decodeJson(payloadPart)
      if (!payload) return { ok: false, reason: 'malformed_token' }
      // The toolkit's contract reads cnf too: a malformed one makes the claims invalid.
      const claims: VerifiedAccessTokenClaims | undefined = readAccessTokenClaims(payload)
      if (!claims) return { ok: false, reason: 'invalid_claims' }
      if (claims.iss !== config.issuer) return { ok: false, reason: 'wrong_issuer' }
      const result = checkExpiry(claims)
      if (result.ok) remember(token, claims, header.kid)
      return result
    },
  }
}

export type AccessTokenVerifier = ReturnType<typeof createAccessTokenVerifier>
