import type { Migration } from 'kysely'
import * as m0001 from './0001_initial.js'
import * as m0002 from './0002_pending_authorization_session.js'
import * as m0003 from './0003_revocation_events.js'
import * as m0004 from './0004_one_key_to_the_grant.js'
import * as m0005 from './0005_housekeeping.js'
import * as m0006 from './0006_resource_indicators.js'
import * as m0007 from './0007_refresh_retry_window.js'
import * as m0008 from './0008_dpop.js'
import * as m0009 from './0009_client_and_resource_server_lifecycle.js'
import * as m0010 from './0010_signing_key_lifecycle.js'
import * as m0011 from './0011_audit_trail.js'
import * as m0013 from './0013_refresh_successor.js'
import * as m0014 from './0014_client_registration.js'
import * as m0015 from './0015_passkeys.js'
import * as m0017 from './0017_client_standing.js'
import * as m0018 from './0018_device_authorization.js'
import * as m0019 from './0019_pushed_authorization_requests.js'
import * as m0020 from './0020_client_default_scopes.js'
import * as m0021 from './0021_device_only_clients.js'
import * as m0022 from './0022_dynamic_scope_ceiling.js'
import * as m0023 from './0023_pending_ui_locale.js'

/** Every migration, in order. Names are frozen once landed. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_pending_authorization_session': m0002,
  '0003_revocation_events': m0003,
  '0004_one_key_to_the_grant': m0004,
  '0005_housekeeping': m0005,
  '0006_resource_indicators': m0006,
  '0007_refresh_retry_window': m0007,
  '0008_dpop': m0008,
  '0009_client_and_resource_server_lifecycle': m0009,
  '0010_signing_key_lifecycle': m0010,
  '0011_audit_trail': m0011,
  '0013_refresh_successor': m0013,
  '0014_client_registration': m0014,
  '0015_passkeys': m0015,
  '0017_client_standing': m0017,
  '0018_device_authorization': m0018,
  '0019_pushed_authorization_requests': m0019,
  '0020_client_default_scopes': m0020,
  '0021_device_only_clients': m0021,
  '0022_dynamic_scope_ceiling': m0022,
  '0023_pending_ui_locale': m0023,
}
