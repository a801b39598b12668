import { z } from 'zod'
import {
  badInput,
  isoTime,
  noAdminToken,
  ok,
  type Operations,
  nextCursor,
  queryParameter,
} from '../openapi/describe.js'
import { AUDIT_ACTOR_KINDS, AUDIT_EVENT_TYPES } from './audit.service.js'
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from './audit.routes.js'

export const auditEventSchema = z.object({
  id: z.string().meta({ description: 'Increasing with each event written.' }),
  occurred_at: isoTime,
  type: z.enum(AUDIT_EVENT_TYPES),
  actor: z.object({
    kind: z.enum(AUDIT_ACTOR_KINDS),
    id: z
      .string()
      .nullable()
      .meta({ description: 'The user, client or resource server id; null for operator and anonymous.' }),
  }),
  target: z.object({ kind: z.string(), id: z.string().nullable() }).nullable(),
  user_id: z.string().nullable().meta({ description: 'The user the event concerns.' }),
  client_id: z.string().nullable().meta({ description: 'The application the event concerns.' }),
  client_address: z.string().nullable().meta({
    description:
      'The address the request came from (request.ip; follows X-Forwarded-For only with TRUST_PROXY).',
  }),
  user_agent: z.string().nullable().meta({ description: 'The User-Agent header, cut at 256 characters.' }),
  request_id: z
    .string()
    .nullable()
    .meta({ description: 'The request id (`reqId` in the log lines of that request).' }),
  details: z
    .record(z.string(), z.unknown())
    .meta({ description: 'Small facts (scopes, reasons, counts); never a secret or token.' }),
})

export const auditPageSchema = z.object({
  events: z.array(auditEventSchema),
  next_cursor: nextCursor('Pass as `cursor` for the next (older) page; null when there is none.'),
})

export const auditAdminOperations: Operations = {
  '/admin/audit': {
    get: {
      operationId: 'listAuditEvents',
      summary: 'Read the audit trail, newest first, one page at a time.',
      parameters: [
        queryParameter('user_id', 'Only events concerning this user (UUID).', {
          type: 'string',
          format: 'uuid',
        }),
        queryParameter('client_id', 'Only events concerning this application.'),
        {
          ...queryParameter(
            'type',
            'Only events of these types (repeat the parameter, or separate with commas).',
            {
              type: 'array',
              items: { type: 'string', enum: [...AUDIT_EVENT_TYPES] },
            },
          ),
          style: 'form',
          explode: true,
        },
        queryParameter('from', 'Events at or after this ISO 8601 time.', {
          type: 'string',
          format: 'date-time',
        }),
        queryParameter('to', 'Events before this ISO 8601 time.', { type: 'string', format: 'date-time' }),
        queryParameter('cursor', 'The `next_cursor` of the previous page.'),
        queryParameter('limit', `Events per page, 1–${AUDIT_PAGE_MAX} (default ${AUDIT_PAGE_DEFAULT}).`, {
          type: 'integer',
          minimum: 1,
          maximum: AUDIT_PAGE_MAX,
        }),
      ],
      responses: {
        '200': ok('A page of events.', auditPageSchema),
        '400': badInput,
        '401': noAdminToken,
      },
    },
  },
}
