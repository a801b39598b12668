import type { Migration } from 'kysely'
import * as m0001 from './0001_initial.js'
import * as m0002 from './0002_pending_authorization_session.js'
import * as m0003 from './0003_revocation_events.js'
import * as m0004 from './0004_one_key_to_the_grant.js'
import * as m0005 from './0005_housekeeping.js'
import * as m0006 from './0006_resource_indicators.js'

/** Every migration, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_pending_authorization_session': m0002,
  '0003_revocation_events': m0003,
  '0004_one_key_to_the_grant': m0004,
  '0005_housekeeping': m0005,
  '0006_resource_indicators': m0006,
}
