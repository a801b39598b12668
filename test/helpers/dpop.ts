import { CompactSign, exportJWK, generateKeyPair, type JWK } from 'jose'

/** A DPoP key of a test client: its private key, its public JWK. */
export interface DpopKey {
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']
  jwk: JWK
  alg: 'ES256' | 'EdDSA'
}

export async function dpopKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, jwk: await exportJWK(publicKey), alg }
}

/**
 * A DPoP proof for the token endpoint of `issuer` at `now`, as a client makes one; `header` and
 * `claims` replace members (undefined removes one), so a test can make any hostile proof.
 */
export function dpopProof(
  key: DpopKey,
  options: {
    issuer: string
    now: Date
    header?: Record<string, unknown>
    claims?: Record<string, unknown>
  },
): Promise<string> {
  const header: Record<string, unknown> = { typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...options.header }
  const claims: Record<string, unknown> = {
    jti: crypto.randomUUID(),
    htm: 'POST',
    htu: `${options.issuer}/api/oauth/token`,
    iat: Math.floor(options.now.getTime() / 1000),
    ...options.claims,
  }
  for (const o of [header, claims]) for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader(header as { alg: string })
    .sign(key.privateKey)
}
