import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'

/** The details of the audit rows of `type` about the application `clientId`, in no set order. */
export async function clientAuditDetails(
  db: Kysely<Database>,
  clientId: string,
  type: string,
): Promise<unknown[]> {
  const rows = await db
    .selectFrom('audit_events')
    .select('details')
    .where('client_id', '=', clientId)
    .where('event_type', '=', type)
    .execute()
  return rows.map((row) => row.details)
}
