import type { Kysely } from 'kysely'
import { connectSchemaDatabase, type SchemaDatabaseHandle, schemaDatabase } from '../../../shared/db.js'
import type { LinksDatabase } from './database.js'

/** The PostgreSQL schema that holds every table of the links API. */
export const LINKS_SCHEMA = 'links_api'

export type LinksDatabaseHandle = SchemaDatabaseHandle<LinksDatabase>

/** The links API's view of a connection: every table reference lands in schema links_api. */
export function linksDatabase(root: Kysely<unknown>): Kysely<LinksDatabase> {
  return schemaDatabase<LinksDatabase>(root, LINKS_SCHEMA)
}

/** PostgreSQL at `url`, or PGlite (embedded PostgreSQL) with its files in `dataDir`. */
export function connectLinksDatabase(options: {
  url: string | undefined
  dataDir: string
  poolSize: number
}): Promise<LinksDatabaseHandle> {
  return connectSchemaDatabase<LinksDatabase>({ ...options, schema: LINKS_SCHEMA })
}
