import { randomInt } from 'node:crypto'

/**
 * RFC 8628 §6.1: user codes a person types from another screen. Base-20 consonants (no vowels, so no
 * words; no look-alike digits), 8 characters (20^8 ≈ 2^34.5, with entry throttled), shown as
 * XXXX-XXXX; read back case- and hyphen-insensitively.
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8

/** A fresh user code, formatted XXXX-XXXX. */
export function newUserCode(): string {
  let code = ''
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)]
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/**
 * What a person typed, as the 8 characters it was made of (upper case, hyphens and spaces dropped),
 * or undefined when it cannot be a user code (a typo answered at once, without a lookup).
 */
export function normalizeUserCode(typed: unknown): string | undefined {
  if (typeof typed !== 'string' || typed.length > 32) return undefined
  const code = typed.toUpperCase().replace(/[\s-]/g, '')
  if (code.length !== LENGTH) return undefined
  for (const c of code) if (!ALPHABET.includes(c)) return undefined
  return code
}

/** The normalized code as a person reads it: XXXX-XXXX. */
export const formatUserCode = (normalized: string): string =>
  `${normalized.slice(0, 4)}-${normalized.slice(4)}`
