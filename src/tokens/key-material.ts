import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto'

export type SigningAlg = 'ES256' | 'EdDSA' | 'RS256'

export interface GeneratedSigningKey {
  kid: string
  alg: SigningAlg
  publicJwk: Record<string, unknown>
  /** PKCS#8 PEM; encrypt before it leaves memory. */
  privateKeyPem: string
}

function generateKeyPair(alg: SigningAlg) {
  switch (alg) {
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    case 'EdDSA':
      return generateKeyPairSync('ed25519')
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 })
  }
}

/** The members RFC 7638 hashes for each key type, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url): a kid derived from the key itself. */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members = THUMBPRINT_MEMBERS[String(jwk.kty)]
  if (!members) throw new Error(`no thumbprint for key type ${String(jwk.kty)}`)
  const canonical = JSON.stringify(Object.fromEntries(members.map((m) => [m, jwk[m]])))
  return createHash('sha256').update(canonical).digest('base64url')
}

export function generateSigningKey(alg: SigningAlg): GeneratedSigningKey {
  const { publicKey, privateKey } = generateKeyPair(alg)
  const publicJwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>
  return {
    kid: jwkThumbprint(publicJwk),
    alg,
    publicJwk,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  }
}

export function loadPrivateKey(pem: string): KeyObject {
  return createPrivateKey(pem)
}
