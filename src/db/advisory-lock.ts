import { type Kysely, sql } from 'kysely'
import type { Database } from './database.js'
import { inRetriedTransaction } from './transaction.js'

/**
 * Advisory lock keys, one per kind of work that must run on one instance at a time. Each is taken per
 * transaction (pg_*_advisory_xact_lock), so it is released at commit, even through a
 * transaction-pooling proxy.
 */
export const ADVISORY_LOCKS = {
  /** The bytes of "lkhk": housekeeping batches. */
  housekeeping: 0x6c6b686b,
  /** The bytes of "lksk": every change of which signing key signs (schedule, rotation, revocation). */
  signingKeys: 0x6c6b736b,
} as const

/**
 * Runs `work` in a transaction of its own that holds the lock `key`. With `wait: false` (the default)
 * it returns undefined, having done nothing, when another instance holds the lock; with `wait: true`
 * it waits for it. Work that loses a deadlock or a serialization conflict is run again from the start
 * (inRetriedTransaction).
 */
export function inAdvisoryLock<T>(
  db: Kysely<Database>,
  key: number,
  work: (trx: Kysely<Database>) => Promise<T>,
  options: { wait?: boolean } = {},
): Promise<T | undefined> {
  return inRetriedTransaction(db, async (trx) => {
    if (options.wait) {
      await sql`select pg_advisory_xact_lock(${key})`.execute(trx)
      return work(trx)
    }
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(${key}) as locked`.execute(trx)
    return rows[0]?.locked ? work(trx) : undefined
  })
}
