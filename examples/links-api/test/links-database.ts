import type { Kysely } from 'kysely'
import { connectLinksDatabase, linksDatabase } from '../src/db/connect.js'
import type { LinksDatabase } from '../src/db/database.js'
import { migrateLinksDatabase } from '../src/db/migrator.js'
import type { TestDatabase } from '../../../test/helpers/database.js'

export interface LinksTestDatabase {
  db: Kysely<LinksDatabase>
  close(): Promise<void>
}

/**
 * The links API's schema in a test file's database, migrated by its own migrator. On PostgreSQL it
 * gets a pool of its own, as the separate service it is; embedded PGlite serves one connection, so
 * there the links API shares it.
 */
export async function createLinksTestDatabase(database: TestDatabase): Promise<LinksTestDatabase> {
  if (database.url) {
    const handle = await connectLinksDatabase({ url: database.url, dataDir: '', poolSize: 10 })
    await migrateLinksDatabase(handle.root)
    return { db: handle.db, close: handle.close }
  }
  await migrateLinksDatabase(database.db as Kysely<unknown>)
  return { db: linksDatabase(database.db as Kysely<unknown>), close: async () => {} }
}
