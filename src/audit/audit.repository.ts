import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'

/** One row as written; the service fills in the request's facts and the time. */
export interface AuditRowInput {
  occurredAt: Date
  eventType: string
  actorKind: string
  actorId: string | null
  targetKind: string | null
  targetId: string | null
  userId: string | null
  clientId: string | null
  clientAddress: string | null
  userAgent: string | null
  requestId: string | null
  details: Record<string, unknown>
}

export interface AuditRow extends AuditRowInput {
  id: string
}

export async function insertAuditRows(db: Kysely<Database>, rows: AuditRowInput[]): Promise<void> {
  if (rows.length === 0) return
  await db
    .insertInto('audit_events')
    .values(
      rows.map((r) => ({
        occurred_at: r.occurredAt,
        event_type: r.eventType,
        actor_kind: r.actorKind,
        actor_id: r.actorId,
        target_kind: r.targetKind,
        target_id: r.targetId,
        user_id: r.userId,
        client_id: r.clientId,
        client_address: r.clientAddress,
        user_agent: r.userAgent,
        request_id: r.requestId,
        details: JSON.stringify(r.details),
      })),
    )
    .execute()
}

export interface AuditQuery {
  userId?: string | undefined
  clientId?: string | undefined
  eventTypes?: readonly string[] | undefined
  /** occurred_at ≥ from */
  from?: Date | undefined
  /** occurred_at < to */
  to?: Date | undefined
  /** Rows strictly older than this (occurred_at, id) position: the cursor. */
  before?: { occurredAt: Date; id: string } | undefined
  limit: number
}

/**
 * Newest first, by (occurred_at, id): each filter has an index in that order (migration 0011), so a
 * page reads about `limit` rows whatever the table's size.
 */
export async function listAuditRows(db: Kysely<Database>, q: AuditQuery): Promise<AuditRow[]> {
  let query = db
    .selectFrom('audit_events')
    .select([
      sql<string>`id::text`.as('id'),
      'occurred_at',
      'event_type',
      'actor_kind',
      'actor_id',
      'target_kind',
      'target_id',
      'user_id',
      'client_id',
      'client_address',
      'user_agent',
      'request_id',
      'details',
    ])
  if (q.userId !== undefined) query = query.where('user_id', '=', q.userId)
  if (q.clientId !== undefined) query = query.where('client_id', '=', q.clientId)
  if (q.eventTypes !== undefined && q.eventTypes.length > 0)
    query = query.where('event_type', 'in', [...q.eventTypes])
  if (q.from !== undefined) query = query.where('occurred_at', '>=', q.from)
  if (q.to !== undefined) query = query.where('occurred_at', '<', q.to)
  if (q.before !== undefined) {
    const { occurredAt, id } = q.before
    query = query.where(sql<boolean>`(occurred_at, id) < (${occurredAt}, ${id}::bigint)`)
  }
  const rows = await query.orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()
  return rows.map((r) => ({
    id: r.id,
    occurredAt: r.occurred_at,
    eventType: r.event_type,
    actorKind: r.actor_kind,
    actorId: r.actor_id,
    targetKind: r.target_kind,
    targetId: r.target_id,
    userId: r.user_id,
    clientId: r.client_id,
    clientAddress: r.client_address,
    userAgent: r.user_agent,
    requestId: r.request_id,
    details: typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : r.details,
  }))
}

/**
 * Whether the connected role can change the audit trail beyond appending: it owns audit_events (or
 * is a member of its owner, who may disable the append-only triggers), is a superuser, or holds
 * UPDATE, DELETE or TRUNCATE on it.
 */
export async function roleCanRewriteAuditTrail(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ can: boolean }>`
    select pg_has_role(current_user, c.relowner, 'USAGE')
        or (select rolsuper from pg_roles where rolname = current_user)
        or has_table_privilege(c.oid, 'UPDATE, DELETE, TRUNCATE') as can
      from pg_class c where c.oid = 'audit_events'::regclass`.execute(db)
  return rows[0]?.can ?? false
}
