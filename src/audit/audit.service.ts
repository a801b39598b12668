import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Database } from '../db/database.js'
import { ProblemError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import {
  AUDIT_EVENT_TYPES,
  type AuditDetails,
  type AuditEvent,
  type AuditEventType,
  type AuditRecorder,
} from './audit-events.js'
import {
  type AuditRow,
  type AuditRowInput,
  insertAuditRows,
  listAuditRows,
  roleCanRewriteAuditTrail,
} from './audit.repository.js'

export * from './audit-events.js'
export type { AuditRow }

/** Column bounds (migration 0011): longer values are cut, never refused. */
const MAX_USER_AGENT = 256
const MAX_ADDRESS = 64
const MAX_REQUEST_ID = 64
const MAX_DETAIL_STRING = 200
const MAX_DETAIL_ITEMS = 50

/** The events a user sees in their own history (account page): their consents and revocations. */
export const USER_HISTORY_TYPES: readonly AuditEventType[] = [
  'consent.granted',
  'consent.widened',
  'grant.revoked',
  'password.changed',
  'password.reset',
  'passkey.registered',
  'passkey.renamed',
  'passkey.removed',
  'passkey.reset',
  'password_sign_in.disabled',
  'password_sign_in.enabled',
]

export interface AuditPageQuery {
  userId?: string | undefined
  clientId?: string | undefined
  eventTypes?: readonly AuditEventType[] | undefined
  from?: Date | undefined
  to?: Date | undefined
  cursor?: string | undefined
  limit: number
}

const cut = (value: string | undefined, max: number) =>
  value === undefined ? null : value.length > max ? value.slice(0, max) : value

function boundedDetails(details: AuditDetails | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(details ?? {})) {
    out[key] =
      typeof value === 'string'
        ? value.slice(0, MAX_DETAIL_STRING)
        : Array.isArray(value)
          ? value.slice(0, MAX_DETAIL_ITEMS).map((v) => v.slice(0, MAX_DETAIL_STRING))
          : value
  }
  return out
}

/** The opaque cursor: the (occurred_at, id) position of the last row of a page, base64url. */
export function encodeCursor(row: Pick<AuditRow, 'occurredAt' | 'id'>): string {
  return Buffer.from(`${row.occurredAt.toISOString()}|${row.id}`).toString('base64url')
}

export function decodeCursor(cursor: string): { occurredAt: Date; id: string } | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|(\d{1,19})$/.exec(text)
  if (!match) return undefined
  const occurredAt = new Date(match[1]!)
  return Number.isNaN(occurredAt.getTime()) ? undefined : { occurredAt, id: match[2]! }
}

export function isAuditEventType(value: string): value is AuditEventType {
  return (AUDIT_EVENT_TYPES as readonly string[]).includes(value)
}

/**
 * Whether the role the server serves with could change or delete audit rows (it owns the table, is
 * a superuser, or was granted more than INSERT and SELECT): main.ts warns at start when it can.
 */
export const auditTrailIsRewritable = (db: Kysely<Database>): Promise<boolean> => roleCanRewriteAuditTrail(db)

export function createAuditService(deps: { db: Kysely<Database>; clock: Clock; logger: Logger }) {
  const { db, clock, logger } = deps

  function toRow(event: AuditEvent, now: Date): AuditRowInput {
    const request = event.from
    const agent = request?.headers['user-agent']
    return {
      occurredAt: now,
      eventType: event.type,
      actorKind: event.actor.kind,
      actorId: event.actor.id ?? null,
      targetKind: event.target?.kind ?? null,
      targetId: event.target?.id ?? null,
      userId: event.userId ?? null,
      clientId: event.clientId ?? null,
      clientAddress: cut(request?.ip, MAX_ADDRESS),
      userAgent: cut(typeof agent === 'string' ? agent : undefined, MAX_USER_AGENT),
      requestId: cut(request?.id, MAX_REQUEST_ID),
      details: boundedDetails(event.details),
    }
  }

  const recorder: AuditRecorder = {
    async record(trx, event) {
      const now = clock.now()
      const events = Array.isArray(event) ? event : [event]
      await insertAuditRows(
        trx,
        events.map((e) => toRow(e, now)),
      )
    },
    async recordRefusal(event) {
      try {
        await insertAuditRows(db, [toRow(event, clock.now())])
      } catch (err) {
        // The refusal stands without its row; the log line keeps what the row would have said.
        logger.warn({ err, auditEvent: event.type }, 'audit event not recorded')
      }
    },
  }

  return {
    ...recorder,
    recorder,
    /** One page, newest first; nextCursor continues after its last row (undefined: no more). */
    async list(query: AuditPageQuery): Promise<{ events: AuditRow[]; nextCursor: string | undefined }> {
      let before
      if (query.cursor !== undefined) {
        before = decodeCursor(query.cursor)
        if (!before) throw new ProblemError(400, 'cursor: not a cursor this API gave out', 'cursor')
      }
      const rows = await listAuditRows(db, { ...query, before, limit: query.limit + 1 })
      const events = rows.slice(0, query.limit)
      const last = events.at(-1)
      return { events, nextCursor: rows.length > query.limit && last ? encodeCursor(last) : undefined }
    },
    /** A user's own consents, revocations and password changes, newest first (account page). */
    historyOfUser: (userId: string, limit = 50): Promise<AuditRow[]> =>
      listAuditRows(db, { userId, eventTypes: USER_HISTORY_TYPES, limit }),
  }
}

export type AuditService = ReturnType<typeof createAuditService>
