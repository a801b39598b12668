import { hash, randomFillSync, timingSafeEqual } from 'node:crypto'

/**
 * Random bytes come from one buffer refilled from the CSPRNG 64 tokens at a time, as randomUUID's
 * own cache does: a randomBytes call per token cost ~20 µs on the bench VM (issue 41), a refill of
 * 2 KiB about as much. Each range is handed out once and zeroed as it goes; a process of the cluster
 * is spawned, not forked, so no two processes share the buffer.
 */
const POOL_BYTES = 2048
const pool = Buffer.alloc(POOL_BYTES)
let poolOffset = POOL_BYTES

/** `bytes` random bytes as base64url; lib/identifiers.ts says which identifier uses how many. */
export function randomToken(bytes = 32): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > POOL_BYTES) {
    throw new RangeError(`randomToken: bytes must be an integer from 1 to ${POOL_BYTES}`)
  }
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const start = poolOffset
  poolOffset += bytes
  const token = pool.toString('base64url', start, poolOffset)
  pool.fill(0, start, poolOffset)
  return token
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
