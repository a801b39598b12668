import { z } from 'zod'
import { badInput, isoTime, noAdminToken, ok, type Operations } from '../openapi/describe.js'
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
  next_cursor: z
    .string()
    .nullable()
    .meta({ description: 'Pass as `cursor` for the next (older) page; null when there is none.' }),
})

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
})

export const auditAdminOperations: Operations = {
  '/admin/audit': {
    get: {
      operationId: 'listAuditEvents',
      summary: 'Read the audit trail, newest first, one page at a time.',
      parameters: [
        query('user_id', 'Only events concerning this user (UUID).', { type: 'string', format: 'uuid' }),
        query('client_id', 'Only events concerning this application.'),
        {
          ...query('type', 'Only events of these types (repeat the parameter, or separate with commas).', {
            type: 'array',
            items: { type: 'string', enum: [...AUDIT_EVENT_TYPES] },
          }),
          style: 'form',
          explode: true,
        },
        query('from', 'Events at or after this ISO 8601 time.', { type: 'string', format: 'date-time' }),
        query('to', 'Events before this ISO 8601 time.', { type: 'string', format: 'date-time' }),
        query('cursor', 'The `next_cursor` of the previous page.'),
        query('limit', `Events per page, 1–${AUDIT_PAGE_MAX} (default ${AUDIT_PAGE_DEFAULT}).`, {
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
