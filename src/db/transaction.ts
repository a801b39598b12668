import type { Kysely } from 'kysely'
import type { Database } from './database.js'
import { retryOnConcurrencyConflict } from './errors.js'

/**
 * Runs `work` in a transaction of its own, and runs it again from its start, in a new transaction,
 * when PostgreSQL aborts it as a deadlock victim or for a serialization failure (isConcurrencyConflict,
 * up to three attempts). Such an abort rolls back the whole transaction, not only the statement that
 * met it, so the statement alone cannot be repeated; the new run sees what the other side committed.
 * Use it for a transaction that locks several rows another statement may lock in another order (a
 * revocation of many grants beside the token endpoint's batched statements). `work` must keep to the
 * database: whatever else it did would be done twice.
 */
export function inRetriedTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return retryOnConcurrencyConflict(() => db.transaction().execute(work))
}

/**
 * Runs `work` in the caller's transaction `trx` when one is given (so that more can join it), else
 * in a transaction of its own: run again from its start on a concurrency conflict when `retried`
 * (inRetriedTransaction), once otherwise.
 */
export function inGivenOrOwnTransaction<T>(
  db: Kysely<Database>,
  trx: Kysely<Database> | undefined,
  work: (trx: Kysely<Database>) => Promise<T>,
  own: { retried: boolean },
): Promise<T> {
  if (trx) return work(trx)
  return own.retried ? inRetriedTransaction(db, work) : db.transaction().execute(work)
}
