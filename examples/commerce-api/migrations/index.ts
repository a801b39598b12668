import type { Migration } from 'kysely'
import * as m0001 from './0001_commerce.js'
import * as m0002 from './0002_link_archive.js'
import * as m0003 from './0003_app_write_counts.js'

/** Every migration of the commerce API, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_commerce': m0001,
  '0002_link_archive': m0002,
  '0003_app_write_counts': m0003,
}
