import { type Kysely, Migrator } from 'kysely'
import { migrations } from '../../migrations/index.js'

export interface MigrationReport {
  applied: string[]
}

function migratorFor(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/** Brings the schema to the newest migration; throws on the first failure (nothing half-applied: each runs in a transaction). */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationReport> {
  const { error, results } = await migratorFor(db).migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}

/** True when every known migration has been applied. */
export async function migrationsAreCurrent(db: Kysely<any>): Promise<boolean> {
  const all = await migratorFor(db).getMigrations()
  return all.every((m) => m.executedAt !== undefined)
}
