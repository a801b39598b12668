import type { Kysely } from 'kysely'
import {
  connectSchemaDatabase,
  migrateSchema,
  type SchemaDatabaseHandle,
  schemaDatabase,
} from '../../../shared/db.js'
import { migrations } from '../../migrations/index.js'
import type { CommerceDatabase } from './database.js'

/** The PostgreSQL schema that holds every table of the commerce API. */
export const COMMERCE_SCHEMA = 'commerce_api'

export type CommerceDatabaseHandle = SchemaDatabaseHandle<CommerceDatabase>

/** The commerce API's view of a connection: every table reference lands in schema commerce_api. */
export function commerceDatabase(root: Kysely<unknown>): Kysely<CommerceDatabase> {
  return schemaDatabase<CommerceDatabase>(root, COMMERCE_SCHEMA)
}

/** PostgreSQL at `url`, or PGlite (embedded PostgreSQL) with its files in `dataDir`. */
export function connectCommerceDatabase(options: {
  url: string | undefined
  dataDir: string
  poolSize: number
}): Promise<CommerceDatabaseHandle> {
  return connectSchemaDatabase<CommerceDatabase>({ ...options, schema: COMMERCE_SCHEMA })
}

/** Brings schema commerce_api to the newest migration (its bookkeeping tables in that schema too). */
export function migrateCommerceDatabase(root: Kysely<unknown>): Promise<string[]> {
  return migrateSchema(root, COMMERCE_SCHEMA, migrations)
}
