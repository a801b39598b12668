import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { AuditActor, AuditRecorder, RequestFacts } from '../audit/audit.service.js'
import { inGivenOrOwnTransaction, inRetriedTransaction } from '../db/transaction.js'
import type { Clock } from '../lib/clock.js'
import { type RevokedGrant, revokeGrantsWhere } from './grant-revocation.repository.js'

/** What revoking grants needs; the grant service builds it once. */
export interface GrantRevocationDeps {
  db: Kysely<Database>
  clock: Clock
  audit: AuditRecorder
  /** Metrics: `count` grants were revoked (not the revocation feed, which a trigger feeds). */
  metricHooks: { revoked?(kind: 'grant', count: number): void }
}

/** One grant.revoked row per grant a revocation ended, in the revocation's transaction. */
export function recordRevoked(
  deps: GrantRevocationDeps,
  t: Kysely<Database>,
  revoked: RevokedGrant[],
  actor: AuditActor,
  reason: string,
  from: RequestFacts | undefined,
): Promise<void> {
  return deps.audit.record(
    t,
    revoked.map((g) => ({
      type: 'grant.revoked' as const,
      actor,
      target: { kind: 'grant' as const, id: g.id },
      userId: g.userId,
      clientId: g.clientId,
      details: { reason },
      from,
    })),
  )
}

/**
 * Revokes the grants `filter` names in `trx`, with their audit rows: how many. The caller counts
 * them for metrics (counted) once its transaction has committed.
 */
async function revokeAndRecord(
  deps: GrantRevocationDeps,
  trx: Kysely<Database>,
  filter: Parameters<typeof revokeGrantsWhere>[1],
  reason: string,
  actor: AuditActor,
  from: RequestFacts | undefined,
): Promise<number> {
  const revoked = await revokeGrantsWhere(trx, filter, deps.clock.now(), reason)
  await recordRevoked(deps, trx, revoked, actor, reason, from)
  return revoked.length
}

function counted(deps: GrantRevocationDeps, count: number): number {
  deps.metricHooks.revoked?.('grant', count)
  return count
}

/**
 * Revokes one user's live grant to one client and every refresh family under it, in a transaction
 * of its own (run again when it loses a deadlock). False when there was nothing live to revoke.
 */
export async function revokeGrantOf(
  deps: GrantRevocationDeps,
  userId: string,
  clientId: string,
  actor: AuditActor,
  reason: 'user_revoked' | 'operator_revoked',
  from: RequestFacts | undefined,
): Promise<boolean> {
  const count = await inRetriedTransaction(deps.db, (t) =>
    revokeAndRecord(deps, t, { userId, clientId }, reason, actor, from),
  )
  return counted(deps, count) > 0
}

/**
 * Revokes every live grant of a user (every connected application) and their refresh families,
 * inside the caller's transaction, opened with inRetriedTransaction: a revocation of several grants
 * can lose a deadlock to the token endpoint's batched statements (see revokeGrantsWhere).
 */
export async function revokeAllForUser(
  deps: GrantRevocationDeps,
  trx: Kysely<Database>,
  userId: string,
  reason: 'password_reset' | 'password_changed',
  from: RequestFacts | undefined,
): Promise<number> {
  return counted(
    deps,
    await revokeAndRecord(deps, trx, { userId }, reason, { kind: 'user', id: userId }, from),
  )
}

/**
 * Revokes every live grant of a client and their refresh families, in the caller's `trx` (opened
 * with inRetriedTransaction) or, without it, in a transaction of its own run again when it loses a
 * deadlock.
 */
export async function revokeAllForClient(
  deps: GrantRevocationDeps,
  clientId: string,
  trx: Kysely<Database> | undefined,
  from: RequestFacts | undefined,
  why: { reason: 'client_disabled' | 'client_document_changed'; actor: AuditActor },
): Promise<number> {
  const count = await inGivenOrOwnTransaction(
    deps.db,
    trx,
    (t) => revokeAndRecord(deps, t, { clientId }, why.reason, why.actor, from),
    { retried: true },
  )
  return counted(deps, count)
}

/** Every live grant of dynamic registrations about to be deleted, in the caller's transaction. */
export async function revokeAllForRemovedClients(
  deps: GrantRevocationDeps,
  clientIds: readonly string[],
  reason: 'registration_deleted' | 'registration_expired',
  actor: AuditActor,
  trx: Kysely<Database>,
  from: RequestFacts | undefined,
): Promise<number> {
  return counted(deps, await revokeAndRecord(deps, trx, { clientIds }, reason, actor, from))
}
