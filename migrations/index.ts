import type { Migration } from 'kysely'
import * as m0001 from './0001_initial.js'

/** Every migration, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
}
