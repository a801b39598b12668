import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { revokeGrantsWhere } from './grant-revocation.repository.js'

export function createGrantService(db: Kysely<Database>, clock: Clock) {
  return {
    /**
     * Revokes every live grant of a client and their refresh families. Pass `trx` to make it part
     * of a larger transaction; without it, it runs in one of its own.
     */
    async revokeAllForClient(clientId: string, trx?: Kysely<Database>): Promise<number> {
      const run = (t: Kysely<Database>) => revokeGrantsWhere(t, { clientId }, clock.now(), 'client_disabled')
      const ids = trx ? await run(trx) : await db.transaction().execute(run)
      return ids.length
    },
  }
}

export type GrantService = ReturnType<typeof createGrantService>
