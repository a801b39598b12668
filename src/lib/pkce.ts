import { createHash } from 'node:crypto'
import { constantTimeEqual } from './secrets.js'

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/
/** BASE64URL(SHA256(verifier)) is always 43 characters of base64url without padding. */
export const S256_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/

export function isValidCodeVerifier(verifier: string): boolean {
  return CODE_VERIFIER_PATTERN.test(verifier)
}

export function isValidS256Challenge(challenge: string): boolean {
  return S256_CHALLENGE_PATTERN.test(challenge)
}

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url')
}

/** RFC 7636 §4.6, with a constant-time comparison. */
export function verifyS256(verifier: string, challenge: string): boolean {
  return constantTimeEqual(s256Challenge(verifier), challenge)
}
