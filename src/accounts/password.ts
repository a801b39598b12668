import argon2 from 'argon2'

// OWASP's argon2id baseline (19 MiB, 2 passes); argon2 runs only at sign-in and user creation.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS)
}

let dummyHash: Promise<string> | undefined

/**
 * Verifies a password; with no stored hash (unknown email) it verifies against a dummy hash,
 * so the work, and so the time, is the same and does not tell which emails exist.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword('dummy password for unknown accounts')
  const hash = storedHash ?? (await dummyHash)
  try {
    const ok = await argon2.verify(hash, password)
    return ok && storedHash !== undefined
  } catch {
    return false
  }
}
