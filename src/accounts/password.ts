import argon2 from 'argon2'

// OWASP's argon2id baseline (19 MiB, 2 passes); argon2 runs only at sign-in and user creation.
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS)
}

let dummyHash: Promise<string> | undefined

/**
 * Computes the dummy hash ahead of the first sign-in, so that the first unknown email does not
 * cost one extra hash (a one-time timing difference an attacker could notice).
 */
export function prepareUnknownAccountHash(): Promise<string> {
  if (!dummyHash) {
    dummyHash = hashPassword('dummy password for unknown accounts')
    // Started early and awaited later: keep a failure from being reported as unhandled meanwhile.
    dummyHash.catch(() => {})
  }
  return dummyHash
}

/**
 * Verifies a password; with no stored hash (unknown email) it verifies against a dummy hash,
 * so the work, and so the time, is the same and does not tell which emails exist.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  const unknownAccountHash = prepareUnknownAccountHash()
  const hash = storedHash ?? (await unknownAccountHash)
  try {
    const ok = await argon2.verify(hash, password)
    return ok && storedHash !== undefined
  } catch {
    return false
  }
}
