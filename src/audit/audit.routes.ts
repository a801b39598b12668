import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { isUuid } from '../lib/identifiers.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import {
  AUDIT_EVENT_TYPES,
  type AuditEventType,
  type AuditRow,
  isAuditEventType,
  type AuditService,
} from './audit.service.js'

export const AUDIT_PAGE_DEFAULT = 100
export const AUDIT_PAGE_MAX = 1000

const time = (name: string) =>
  z
    .string()
    .max(40)
    .refine((v) => !Number.isNaN(Date.parse(v)), `an ISO 8601 time, e.g. 2026-01-31T12:00:00Z`)
    .transform((v) => new Date(v))
    .meta({ description: name })

/** A repeated query parameter arrives as an array; one as a string; a comma list is split too. */
const eventTypes = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).filter((s) => s !== ''))
  .refine(
    (list) => list.length <= AUDIT_EVENT_TYPES.length && list.every(isAuditEventType),
    `event types from: ${AUDIT_EVENT_TYPES.join(', ')}`,
  )
  .transform((list) => list as AuditEventType[])

export const auditQuery = z
  .object({
    user_id: z.string().refine(isUuid, 'a user id (UUID)').optional(),
    client_id: z.string().min(1).max(128, 'at most 128 characters').optional(),
    type: eventTypes.optional(),
    from: time('Events at or after this time.').optional(),
    to: time('Events before this time.').optional(),
    cursor: z.string().max(512, 'at most 512 characters').optional(),
    limit: z.coerce
      .number('a whole number')
      .int('a whole number')
      .min(1, 'at least 1')
      .max(AUDIT_PAGE_MAX, `at most ${AUDIT_PAGE_MAX}`)
      .default(AUDIT_PAGE_DEFAULT),
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { message: 'must be after from', path: ['to'] })

export function auditEventJson(row: AuditRow) {
  return {
    id: row.id,
    occurred_at: row.occurredAt.toISOString(),
    type: row.eventType,
    actor: { kind: row.actorKind, id: row.actorId },
    target: row.targetKind === null ? null : { kind: row.targetKind, id: row.targetId },
    user_id: row.userId,
    client_id: row.clientId,
    client_address: row.clientAddress,
    user_agent: row.userAgent,
    request_id: row.requestId,
    details: row.details,
  }
}

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface AuditRouteServices {
  audit: AuditService
}

/** Admin API: read the audit trail, newest first, filtered, one page at a time. */
export function auditAdminRoutes(services: AuditRouteServices) {
  return async (app: FastifyInstance) => {
    app.get('/admin/audit', async (request) => {
      const q = parseOrProblem(auditQuery, request.query)
      const page = await services.audit.list({
        userId: q.user_id,
        clientId: q.client_id,
        eventTypes: q.type,
        from: q.from,
        to: q.to,
        cursor: q.cursor,
        limit: q.limit,
      })
      return { events: page.events.map(auditEventJson), next_cursor: page.nextCursor ?? null }
    })
  }
}
