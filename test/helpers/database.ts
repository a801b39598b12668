import { inject } from 'vitest'
import { connectDatabase, type DatabaseEngine, type DatabaseHandle } from '../../src/db/connect.js'
import { readPGliteSnapshot } from './pglite-snapshots.js'
import {
  createDatabaseFromTemplate,
  createEmptyDatabase,
  databaseUrl,
  dropDatabase,
} from './postgres-admin.js'

export interface TestDatabase extends DatabaseHandle {
  /** The postgres:// URL of this database, when the engine is PostgreSQL. */
  url?: string
}

/** The engine the suite runs on, chosen once by the global setup. */
export function testEngine(): DatabaseEngine {
  return inject('testDatabase').engine
}

/** A fresh, migrated database of its own for one test file (or one test). Close it when done. */
export async function createTestDatabase(
  options: { migrated?: boolean; poolSize?: number } = {},
): Promise<TestDatabase> {
  const migrated = options.migrated ?? true
  const chosen = inject('testDatabase')
  if (chosen.engine === 'pglite') {
    const snapshot = readPGliteSnapshot(chosen.snapshotDir, migrated ? 'migrated' : 'empty')
    return connectDatabase({ pgliteSnapshot: snapshot })
  }
  const name = migrated
    ? await createDatabaseFromTemplate(chosen.adminUrl, chosen.template)
    : await createEmptyDatabase(chosen.adminUrl)
  const url = databaseUrl(chosen.adminUrl, name)
  const handle = await connectDatabase({ databaseUrl: url, poolSize: options.poolSize ?? 10 })
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close()
      await dropDatabase(chosen.adminUrl, name)
    },
  }
}
