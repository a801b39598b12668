import { type Kysely, Migrator } from 'kysely'
import { migrations } from '../../migrations/index.js'
import { LINKS_SCHEMA } from './connect.js'

/**
 * Brings schema links_api to the newest migration. The migrator's own bookkeeping tables live in
 * that schema too, so the authorization server's migrations and ours never see each other.
 */
export async function migrateLinksDatabase(root: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({
    db: root,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: LINKS_SCHEMA,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
