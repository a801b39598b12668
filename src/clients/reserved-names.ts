import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { SERVICE_NAME } from '../web/layout.js'
import { ReservedNames } from './client-names.js'
import { listVerifiedClientNames } from './client.repository.js'

/** How long a snapshot is trusted: how late an app verified on another instance reserves its name here. */
const MAX_AGE_MS = 60_000

/**
 * The names a self-declared one may not borrow (client-names.ts): the service's own, the brands the
 * operator reserved (RESERVED_CLIENT_NAMES), and every app the operator registered or verified, read
 * from the table and kept in memory for a minute, or until this process changes a client.
 */
export function createReservedNames(
  db: Kysely<Database>,
  configured: readonly string[],
  now: () => number = () => performance.now(),
) {
  let snapshot: { names: Promise<ReservedNames>; loadedAt: number } | undefined
  return {
    current(): Promise<ReservedNames> {
      if (!snapshot || now() - snapshot.loadedAt > MAX_AGE_MS) {
        const names = listVerifiedClientNames(db).then(
          (registered) => new ReservedNames([SERVICE_NAME, ...configured, ...registered]),
        )
        const loading = { names, loadedAt: now() }
        snapshot = loading
        // A failed read is not kept: the next call reads again.
        names.catch(() => {
          if (snapshot === loading) snapshot = undefined
        })
      }
      return snapshot.names
    },
    invalidate(): void {
      snapshot = undefined
    },
  }
}

export type ReservedNameList = ReturnType<typeof createReservedNames>
