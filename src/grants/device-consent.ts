import type { Kysely } from 'kysely'
import type { AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import type { Database } from '../db/database.js'
import { OAuthError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import { isSubset } from '../lib/scopes.js'
import { consentEvent } from './code-issuance.js'
import { findLiveGrant, lockEnabledClient, upsertGrant } from './grant.repository.js'

/** What the person allowed on the consent page of a device authorization request (RFC 8628). */
export interface DeviceConsent {
  userId: string
  clientId: string
  scopes: string[]
  resources: string[]
  from?: RequestFacts | undefined
}

export interface DeviceConsentDeps {
  db: Kysely<Database>
  clock: Clock
  audit: AuditRecorder
}

/**
 * The person said Allow to a device request: creates or widens the (user, client) grant, records the
 * consent (with `device: true`), and lets `markApproved` bind the request to the grant, all in one
 * transaction. False, with nothing written, when `markApproved` finds the request answered or expired.
 */
export async function approveDeviceConsent(
  deps: DeviceConsentDeps,
  consent: DeviceConsent,
  markApproved: (trx: Kysely<Database>, grantId: string) => Promise<boolean>,
): Promise<boolean> {
  return deps.db
    .transaction()
    .execute(async (trx) => {
      const client = await lockEnabledClient(trx, consent.clientId)
      if (!client) throw new OAuthError('invalid_client', 'No enabled application has this client_id.', 400)
      if (!isSubset(consent.scopes, client.scopes))
        throw new OAuthError(
          'invalid_scope',
          'This application may no longer ask for some of these scopes.',
          400,
        )
      const before = await findLiveGrant(trx, consent.userId, consent.clientId)
      const now = deps.clock.now()
      const grant = await upsertGrant(trx, consent, now)
      await trx.updateTable('grants').set({ device_authorized_at: now }).where('id', '=', grant.id).execute()
      if (!(await markApproved(trx, grant.id))) throw new AnsweredAlready()
      await deps.audit.record(trx, consentEvent(before, grant, consent, client.standing, { device: true }))
      return true
    })
    .catch((err: unknown) => {
      if (err instanceof AnsweredAlready) return false
      throw err
    })
}

/** Rolls the consent's transaction back: the request was answered or expired meanwhile. */
class AnsweredAlready extends Error {}
