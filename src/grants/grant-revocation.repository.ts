import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

/** A grant a revocation ended, with whose and for which application it was (for the audit trail). */
export interface RevokedGrant {
  id: string
  userId: string
  clientId: string
}

/**
 * Revokes grants and every refresh family under them. Call inside a transaction so that the
 * grants and their families change together.
 */
export async function revokeGrantsWhere(
  trx: Kysely<Database>,
  filter: { clientId?: string; clientIds?: readonly string[]; userId?: string; grantId?: string },
  now: Date,
  reason: string,
): Promise<RevokedGrant[]> {
  let query = trx.updateTable('grants').set({ revoked_at: now }).where('revoked_at', 'is', null)
  if (filter.clientId !== undefined) query = query.where('client_id', '=', filter.clientId)
  if (filter.clientIds !== undefined) {
    if (filter.clientIds.length === 0) return []
    query = query.where('client_id', 'in', filter.clientIds)
  }
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
  if (filter.grantId !== undefined) query = query.where('id', '=', filter.grantId)
  const grants = await query.returning(['id', 'user_id', 'client_id']).execute()
  const ids = grants.map((g) => g.id)
  if (ids.length > 0) {
    await trx
      .updateTable('refresh_families')
      .set({ revoked_at: now, revoked_reason: reason })
      .where('grant_id', 'in', ids)
      .where('revoked_at', 'is', null)
      .execute()
  }
  return grants.map((g) => ({ id: g.id, userId: g.user_id, clientId: g.client_id }))
}
