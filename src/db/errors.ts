/** True for a PostgreSQL unique-constraint violation (SQLSTATE 23505), from pg or PGlite. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505'
}

/** True for a foreign-key violation (SQLSTATE 23503): the row referred to is gone. */
export function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503'
}

/**
 * True when PostgreSQL gave up a statement because of concurrent ones, not because of anything in it:
 * deadlock_detected (40P01) or serialization_failure (40001). The statement had no effect.
 */
export function isConcurrencyConflict(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  return code === '40P01' || code === '40001'
}

/**
 * Runs a single-statement (autocommit) write again when PostgreSQL aborted it as a deadlock victim.
 * Statements that lock rows in different orders can meet that way: a code exchange or a refresh
 * locks its code or token row and then the grant's, while deleting a user cascades from the grant to
 * the codes and tokens. The aborted statement wrote nothing, so running it again is safe, and it then
 * sees what the other one committed (for example, the user is gone: invalid_grant). Never use it
 * inside a transaction, whose earlier statements the abort has undone too: inRetriedTransaction
 * (transaction.ts) runs a whole transaction again.
 */
export async function retryOnConcurrencyConflict<T>(run: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      if (!isConcurrencyConflict(err) || attempt >= attempts) throw err
    }
  }
}
