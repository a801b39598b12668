import type { Kysely } from 'kysely'
import { commerceDatabase, connectCommerceDatabase, migrateCommerceDatabase } from '../src/db/connect.js'
import type { CommerceDatabase } from '../src/db/database.js'
import type { TestDatabase } from '../../../test/helpers/database.js'

export interface CommerceTestDatabase {
  db: Kysely<CommerceDatabase>
  close(): Promise<void>
}

/**
 * The commerce API's schema in a test file's database, migrated by its own migrator. On PostgreSQL
 * it gets a pool of its own, as the separate service it is; embedded PGlite serves one connection,
 * so there it shares it.
 */
export async function createCommerceTestDatabase(database: TestDatabase): Promise<CommerceTestDatabase> {
  if (database.url) {
    const handle = await connectCommerceDatabase({ url: database.url, dataDir: '', poolSize: 10 })
    await migrateCommerceDatabase(handle.root)
    return { db: handle.db, close: handle.close }
  }
  await migrateCommerceDatabase(database.db as Kysely<unknown>)
  return { db: commerceDatabase(database.db as Kysely<unknown>), close: async () => {} }
}
