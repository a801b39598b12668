import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, type Migration, Migrator, PostgresDialect } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'

/**
 * A connection of one example API: every table it names lands in its own PostgreSQL schema, so
 * the APIs (and the authorization server) may share a server or a database but never a table.
 */
export interface SchemaDatabaseHandle<DB> {
  /** Queries on the API's tables (its schema). */
  readonly db: Kysely<DB>
  /** The same connection without a schema: for the migrator. */
  readonly root: Kysely<unknown>
  close(): Promise<void>
}

/** The API's view of a connection: every table reference lands in `schema`. */
export function schemaDatabase<DB>(root: Kysely<unknown>, schema: string): Kysely<DB> {
  return (root as unknown as Kysely<DB>).withSchema(schema)
}

/** PostgreSQL at `url`, or PGlite (embedded PostgreSQL) with its files in `dataDir`. */
export async function connectSchemaDatabase<DB>(options: {
  schema: string
  url: string | undefined
  dataDir: string
  poolSize: number
}): Promise<SchemaDatabaseHandle<DB>> {
  let root: Kysely<unknown>
  if (options.url) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: 5_000,
      statement_timeout: 10_000,
    })
    pool.on('error', () => {}) // an idle connection dying is replaced by the pool, not fatal
    root = new Kysely({ dialect: new PostgresDialect({ pool }) })
  } else {
    mkdirSync(options.dataDir, { recursive: true })
    root = new Kysely({ dialect: new PGliteDialect(await PGlite.create(options.dataDir)) })
  }
  return { db: schemaDatabase<DB>(root, options.schema), root, close: () => root.destroy() }
}

/**
 * Brings `schema` to the newest of `migrations`. The migrator's own bookkeeping tables live in that
 * schema too, so the authorization server's migrations and each API's never see each other.
 */
export async function migrateSchema(
  root: Kysely<unknown>,
  schema: string,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const migrator = new Migrator({
    db: root,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
