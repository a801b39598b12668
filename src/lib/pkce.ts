import { hash } from 'node:crypto'
import { isBase64url256Bits } from './identifiers.js'
import { constantTimeEqual } from './secrets.js'

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/
export function isValidCodeVerifier(verifier: string): boolean {
  return CODE_VERIFIER_PATTERN.test(verifier)
}

/** BASE64URL(SHA256(verifier)) is always 43 characters of base64url without padding. */
export function isValidS256Challenge(challenge: string): boolean {
  return isBase64url256Bits(challenge)
}

export function s256Challenge(verifier: string): string {
  // RFC 7636 §4.1: a verifier is unreserved ASCII (callers check the pattern first), so its UTF-8
  // bytes are the ASCII(code_verifier) of §4.2.
  return hash('sha256', verifier, 'base64url')
}

/** RFC 7636 §4.6, with a constant-time comparison. */
export function verifyS256(verifier: string, challenge: string): boolean {
  return constantTimeEqual(s256Challenge(verifier), challenge)
}
