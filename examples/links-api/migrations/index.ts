import type { Migration } from 'kysely'
import * as m0001 from './0001_links.js'
import * as m0002 from './0002_imports.js'
import * as m0003 from './0003_app_write_counts.js'
import * as m0004 from './0004_import_app.js'

/** Every migration of the links API, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_links': m0001,
  '0002_imports': m0002,
  '0003_app_write_counts': m0003,
  '0004_import_app': m0004,
}
