import { type Kysely, type Migration, Migrator, sql } from 'kysely'
import { migrations as allMigrations } from '../../migrations/index.js'
import { connectDatabase } from './connect.js'

export interface MigrationReport {
  applied: string[]
}

function migratorFor(db: Kysely<any>, migrations = allMigrations): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/**
 * How long the migrations' transaction waits for any one table lock before it gives up and starts
 * again. Below PostgreSQL's deadlock_timeout (1 s), so that when the migration meets a live request
 * holding a lock it needs, the migration yields rather than the request being ended as a deadlock's
 * victim; and short, since the requests queued behind the migration's lock wait that long.
 */
const LOCK_TIMEOUT_MS = 200
/** Another instance migrating holds the migrations' lock for as long as it runs: wait up to this long. */
const MAX_WAIT_MS = 10 * 60_000

/** lock_not_available (lock_timeout) and deadlock_detected: the migration met live traffic; try again. */
function isLockConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code
  return code === '55P03' || code === '40P01'
}

/**
 * Brings the schema to the newest migration; throws on the first failure (nothing half-applied: each
 * runs in a transaction). On PostgreSQL with other instances serving, a migration that cannot take its
 * locks within LOCK_TIMEOUT_MS is rolled back and tried again, for up to MAX_WAIT_MS.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  options: { migrations?: Record<string, Migration> } = {},
): Promise<MigrationReport> {
  const applied: string[] = []
  const until = Date.now() + MAX_WAIT_MS
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await db.connection().execute(async (connection) => {
      await sql`select set_config('lock_timeout', ${`${LOCK_TIMEOUT_MS}ms`}, false)`.execute(connection)
      try {
        return await migratorFor(connection, options.migrations).migrateToLatest()
      } finally {
        await sql`reset lock_timeout`.execute(connection)
      }
    })
    applied.push(...(results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName))
    if (!error) return { applied }
    if (!isLockConflict(error) || Date.now() >= until)
      throw error instanceof Error ? error : new Error(String(error))
    await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 1_000)))
  }
}

/**
 * Migrates through `migrationUrl` when it is set (DATABASE_MIGRATION_URL: the role that owns the
 * tables, so that the serving role need not), else through the serving connection `db`.
 */
export async function migrateThrough(
  db: Kysely<any>,
  migrationUrl: string | undefined,
): Promise<MigrationReport> {
  if (!migrationUrl) return migrateToLatest(db)
  const owner = await connectDatabase({ databaseUrl: migrationUrl, poolSize: 1 })
  try {
    return await migrateToLatest(owner.db)
  } finally {
    await owner.close()
  }
}

/** True when every known migration has been applied. */
export async function migrationsAreCurrent(db: Kysely<any>): Promise<boolean> {
  const all = await migratorFor(db).getMigrations()
  return all.every((m) => m.executedAt !== undefined)
}
