import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import type { LinksDatabase } from './database.js'

/** The PostgreSQL schema that holds every table of the links API. */
export const LINKS_SCHEMA = 'links_api'

export interface LinksDatabaseHandle {
  /** Queries on the links API's tables (schema links_api). */
  readonly db: Kysely<LinksDatabase>
  /** The same connection without a schema: for the migrator. */
  readonly root: Kysely<unknown>
  close(): Promise<void>
}

/** The links API's view of a connection: every table reference lands in schema links_api. */
export function linksDatabase(root: Kysely<unknown>): Kysely<LinksDatabase> {
  return (root as unknown as Kysely<LinksDatabase>).withSchema(LINKS_SCHEMA)
}

/** PostgreSQL at `url`, or PGlite (embedded PostgreSQL) with its files in `dataDir`. */
export async function connectLinksDatabase(options: {
  url: string | undefined
  dataDir: string
  poolSize: number
}): Promise<LinksDatabaseHandle> {
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
  return { db: linksDatabase(root), root, close: () => root.destroy() }
}
