import type { Migration } from 'kysely'
import * as m0001 from './0001_links.js'

/** Every migration of the links API, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_links': m0001,
}
