import type { Kysely } from 'kysely'
import { migrateSchema } from '../../../shared/db.js'
import { migrations } from '../../migrations/index.js'
import { LINKS_SCHEMA } from './connect.js'

/** Brings schema links_api to the newest migration (its bookkeeping tables in that schema too). */
export function migrateLinksDatabase(root: Kysely<unknown>): Promise<string[]> {
  return migrateSchema(root, LINKS_SCHEMA, migrations)
}
