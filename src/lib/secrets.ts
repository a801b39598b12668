import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A UUID as PostgreSQL prints it (any version): the ids of users, grants, families, access tokens. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** 256 random bits as base64url (43 characters): authorization codes, refresh tokens, session ids. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/**
 * SHA-256 of a secret, base64url: the only form in which codes and tokens are stored. crypto.hash
 * (one call, no Hash object) is about three times faster than createHash for inputs this short.
 */
export function sha256(value: string): string {
  return hash('sha256', value, 'base64url')
}

/** Compares two strings in time that depends only on their lengths, never on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  if (left.length !== right.length) {
    // Compare against itself so that a length mismatch costs the same as a content mismatch.
    timingSafeEqual(left, left)
    return false
  }
  return timingSafeEqual(left, right)
}
