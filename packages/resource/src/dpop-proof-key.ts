/**
 * The key of a DPoP proof (RFC 9449): the asymmetric algorithms a proof may be signed with, its JWK
 * thumbprint (RFC 7638: what `cnf.jkt` and `dpop_jkt` hold), and the check of its signature
 * (§4.3 item 7) with node:crypto.
 */
import type { JWK } from 'jose'
import { constants, createHash, createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto'
import { fail } from './dpop-proof-error.js'

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

export const unusableKey = () =>
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
export function verifySignature(
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
