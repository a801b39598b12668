import { createPublicKey, type KeyObject } from 'node:crypto'
import type { Clock } from '../lib/clock.js'
import type { ActiveSigningKey } from './access-token.js'
import type { SigningAlg } from './key-material.js'
import type { SigningKeyInfo } from './signing-key.repository.js'

/** A public key we signed with, ready for node:crypto verify (imported once, never per request). */
export interface VerificationKey {
  kid: string
  alg: SigningAlg
  publicKey: KeyObject
  /** When it stopped signing (ms since the epoch); null while it may sign. */
  retiredAt: number | null
}

/** A decrypted key that may sign, with its public half for verification. */
export interface Signer extends ActiveSigningKey {
  verification: VerificationKey
}

/**
 * A retired key stays published for a token lifetime plus this margin: other instances may go on
 * signing with it until their next poll, and resource servers' clocks drift.
 */
export const PUBLISH_MARGIN_SECONDS = 60

/**
 * The JWKS cut-off: a key retired before it has no live token left, so it leaves the JWKS and is
 * trusted nowhere (a token lifetime plus PUBLISH_MARGIN_SECONDS ago).
 */
export function publishedCutoff(clock: Clock, accessTokenTtl: number): Date {
  return new Date(clock.now().getTime() - (accessTokenTtl + PUBLISH_MARGIN_SECONDS) * 1000)
}

export function toVerificationKey(
  k: Pick<SigningKeyInfo, 'kid' | 'alg' | 'publicJwk' | 'retiredAt'>,
): VerificationKey {
  const publicKey = createPublicKey({ key: k.publicJwk as never, format: 'jwk' })
  return { kid: k.kid, alg: k.alg as SigningAlg, publicKey, retiredAt: k.retiredAt?.getTime() ?? null }
}
