import { type Command, query, table } from './command.js'
import { userIdFrom } from './user-commands.js'

interface AuditEventJson {
  occurred_at: string
  type: string
  actor: { kind: string; id: string | null }
  target: { kind: string; id: string | null } | null
  user_id: string | null
  client_id: string | null
  client_address: string | null
  request_id: string | null
}

/** `audit list`: the audit trail, newest first. */
export const AUDIT_COMMANDS: Command[] = [
  {
    name: 'audit list',
    usage:
      'audit list [--email EMAIL | --user-id ID] [--client-id ID] [--type TYPE ...] [--since TIME] [--until TIME] [--limit N] [--cursor CURSOR]',
    summary: 'read the audit trail, newest first: who did what, when, from where',
    options: {
      email: { type: 'string', description: 'only events concerning the user with this email' },
      'user-id': { type: 'string', description: 'only events concerning this user (UUID)' },
      'client-id': { type: 'string', description: 'only events concerning this application' },
      type: {
        type: 'string',
        multiple: true,
        description: 'only this event type, e.g. grant.revoked (repeatable)',
      },
      since: { type: 'string', description: 'events at or after this ISO 8601 time' },
      until: { type: 'string', description: 'events before this ISO 8601 time' },
      limit: { type: 'string', description: 'events per page, 1–1000 (default 100)' },
      cursor: { type: 'string', description: 'the next_cursor a previous page printed' },
    },
    run: async (request, v) => {
      const userId =
        v.email !== undefined || v['user-id'] !== undefined
          ? await userIdFrom(request, { email: v.email, id: v['user-id'] })
          : undefined
      return request(
        'GET',
        `/admin/audit${query({
          user_id: userId,
          client_id: v['client-id'],
          type: v.type,
          from: v.since,
          to: v.until,
          limit: v.limit,
          cursor: v.cursor,
        })}`,
      )
    },
    show: (r) => {
      const { events, next_cursor } = r as { events: AuditEventJson[]; next_cursor: string | null }
      if (events.length === 0) return 'no events'
      return [
        table([
          ['TIME', 'TYPE', 'ACTOR', 'TARGET', 'USER', 'CLIENT', 'ADDRESS', 'REQUEST'],
          ...events.map((e) => [
            e.occurred_at,
            e.type,
            e.actor.id ? `${e.actor.kind}:${e.actor.id}` : e.actor.kind,
            e.target ? `${e.target.kind}${e.target.id ? `:${e.target.id}` : ''}` : '-',
            e.user_id ?? '-',
            e.client_id ?? '-',
            e.client_address ?? '-',
            e.request_id ?? '-',
          ]),
        ]),
        ...(next_cursor ? [`more: --cursor ${next_cursor}`] : []),
      ].join('\n')
    },
  },
]
