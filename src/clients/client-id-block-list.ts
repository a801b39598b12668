import type { Kysely } from 'kysely'
import { type AuditRecorder, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import type { Clock } from '../lib/clock.js'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { ProblemError } from '../errors.js'
import type { GrantService } from '../grants/grant.service.js'
import { clientIdUrlProblem } from '../lib/identifiers.js'
import { deleteBlockedClientId, insertBlockedClientId } from './client-registration.repository.js'

/**
 * The operator's block list of client_id URLs (metadata-document clients): a blocked id is refused
 * whatever its document says later, seen or not.
 */

export interface BlockListDeps {
  db: Kysely<Database>
  clock: Clock
  grants: GrantService
  audit: AuditRecorder
}

/**
 * Blocks a client_id URL, seen or not: its row (if any) is disabled and its grants revoked, and no
 * document read later unblocks it. `created` false when it was blocked already.
 */
export async function blockClientId(
  deps: BlockListDeps,
  clientId: string,
  reason: string | null,
  from?: RequestFacts,
): Promise<{ created: boolean }> {
  const problem = clientIdUrlProblem(clientId)
  if (problem) throw new ProblemError(400, `client_id ${problem}.`)
  const created = await inRetriedTransaction(deps.db, async (trx) => {
    const now = deps.clock.now()
    const added = await insertBlockedClientId(trx, clientId, reason, now)
    if (!added) return false
    const disabled = await trx
      .updateTable('clients')
      .set((eb) => ({ disabled_at: eb.fn.coalesce('disabled_at', eb.val(now)) }))
      .where('id', '=', clientId)
      .returning('id')
      .executeTakeFirst()
    const revoked = disabled ? await deps.grants.revokeAllForClient(clientId, trx, from) : 0
    await deps.audit.record(trx, {
      type: 'client.blocked',
      actor: OPERATOR,
      target: { kind: 'client', id: clientId },
      clientId,
      details: { reason, grants_revoked: revoked, seen: disabled !== undefined },
      from,
    })
    return true
  })
  return { created }
}

/** Takes a client_id URL off the block list; its row stays disabled until the operator enables it. */
export async function unblockClientId(
  deps: BlockListDeps,
  clientId: string,
  from?: RequestFacts,
): Promise<void> {
  const removed = await deps.db.transaction().execute(async (trx) => {
    const removed = await deleteBlockedClientId(trx, clientId)
    if (removed)
      await deps.audit.record(trx, {
        type: 'client.unblocked',
        actor: OPERATOR,
        target: { kind: 'client', id: clientId },
        clientId,
        from,
      })
    return removed
  })
  if (!removed) throw new ProblemError(404, 'This client_id is not blocked.')
}
