import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'

/** A grant a revocation ended, with whose and for which application it was (for the audit trail). */
export interface RevokedGrant {
  id: string
  userId: string
  clientId: string
}

/**
 * Revokes grants and every refresh family under them. Call inside a transaction so that the
 * grants and their families change together, one opened with inRetriedTransaction (db/transaction.ts)
 * so that a deadlock victim runs again from its start.
 *
 * The grants are locked first, in the order of their ids (FOR NO KEY UPDATE, the lock the UPDATE
 * itself takes), and only then updated: an UPDATE alone locks rows in whatever order its scan meets
 * them, so two revocations over overlapping grants (a client disabled while a user resets their
 * password) could each hold a grant the other waits for. In id order they never deadlock with each
 * other. A batch of code exchanges share-locks the grants of several requests in the order of their
 * codes, so a revocation can still meet one in a deadlock, and PostgreSQL aborts one of the two: the
 * batch runs again input by input, and the revocation's transaction from its start.
 *
 * The families are revoked by a statement of their own, after the grants are locked: its snapshot is
 * taken then, so it sees every family an exchange committed while the revocation waited for the grant.
 */
export async function revokeGrantsWhere(
  trx: Kysely<Database>,
  filter: { clientId?: string; clientIds?: readonly string[]; userId?: string; grantId?: string },
  now: Date,
  reason: string,
): Promise<RevokedGrant[]> {
  let query = trx.selectFrom('grants').select('id').where('revoked_at', 'is', null)
  if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId)
  if (filter.clientIds !== undefined) {
    if (filter.clientIds.length === 0) return []
    query = query.where('client_id', 'in', filter.clientIds)
  }
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
  if (filter.grantId !== undefined) query = query.where('id', '=', filter.grantId)
  const locked = await query.orderBy('id').forNoKeyUpdate().execute()
  if (locked.length === 0) return []
  const ids = locked.map((g) => g.id)
  const grants = await trx
    .updateTable('grants')
    .set({ revoked_at: now })
    .where(sql<boolean>`id = any(${ids}::uuid[])`)
    .returning(['id', 'user_id', 'client_id'])
    .execute()
  await trx
    .updateTable('refresh_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where(sql<boolean>`grant_id = any(${ids}::uuid[])`)
    .where('revoked_at', 'is', null)
    .execute()
  return grants.map((g) => ({ id: g.id, userId: g.user_id, clientId: g.client_id }))
}
