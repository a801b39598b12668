import { CliError, EXIT_REFUSED, EXIT_USAGE } from './admin-client.js'
import { type Command, query, type Request, table } from './command.js'

interface UserJson {
  id: string
  email: string
  created_at: string
}

/** --email or --id: the user a command is about (see userIdFrom). */
export const USER_OPTIONS: Command['options'] = {
  email: { type: 'string', description: "the user's email (any case)" },
  id: { type: 'string', description: 'the user id, instead of --email' },
}

/** The user --id names, or the one whose email is --email (any case); exactly one of them. */
export async function userIdFrom(request: Request, v: { email?: unknown; id?: unknown }): Promise<string> {
  if ((v.email === undefined) === (v.id === undefined))
    throw new CliError('give either --email or the user id', EXIT_USAGE)
  if (typeof v.id === 'string') return v.id
  const email = String(v.email).trim().toLowerCase()
  const { users } = await request<{ users: UserJson[] }>(
    'GET',
    `/admin/users${query({ email_prefix: email, limit: '100' })}`,
  )
  const user = users.find((u) => u.email.toLowerCase() === email)
  if (!user) throw new CliError(`no user has the email ${email}`, EXIT_REFUSED)
  return user.id
}

/** `users …`: creating, finding, changing and deleting users, and a password-reset link. */
export const USER_COMMANDS: Command[] = [
  {
    name: 'users create',
    usage: 'users create --email EMAIL --password PASSWORD',
    summary: 'create a user who can sign in',
    options: {
      email: { type: 'string', required: true, description: 'email address (unique, any case)' },
      password: { type: 'string', required: true, description: '8–1024 characters' },
    },
    run: (request, v) => request('POST', '/admin/users', { email: v.email, password: v.password }),
    show: (r) => `created user ${(r as { id: string }).id} (${(r as { email: string }).email})`,
  },
  {
    name: 'users list',
    usage: 'users list [--email-prefix TEXT | --email-contains TEXT] [--limit N] [--cursor CURSOR]',
    summary: 'list users, oldest first, a page at a time; search by email',
    options: {
      'email-prefix': { type: 'string', description: 'only emails that start with this (any case)' },
      'email-contains': { type: 'string', description: 'only emails that contain this (any case)' },
      limit: { type: 'string', description: 'users per page, 1–500 (default 100)' },
      cursor: { type: 'string', description: 'the next_cursor a previous page printed' },
    },
    run: (request, v) =>
      request(
        'GET',
        `/admin/users${query({
          email_prefix: v['email-prefix'],
          email_contains: v['email-contains'],
          limit: v.limit,
          cursor: v.cursor,
        })}`,
      ),
    show: (r) => {
      const { users, next_cursor } = r as { users: UserJson[]; next_cursor: string | null }
      if (users.length === 0) return 'no users'
      return [
        table([['ID', 'EMAIL', 'CREATED_AT'], ...users.map((u) => [u.id, u.email, u.created_at])]),
        ...(next_cursor ? [`more: --cursor ${next_cursor}`] : []),
      ].join('\n')
    },
  },
  {
    name: 'users delete',
    usage: 'users delete USER_ID',
    summary: 'delete a user and revoke everything of theirs',
    options: {},
    positionals: ['USER_ID'],
    run: async (request, _v, [id]) => {
      await request('DELETE', `/admin/users/${encodeURIComponent(id!)}`)
      return { deleted: id }
    },
    show: (r) => `deleted user ${(r as { deleted: string }).deleted}`,
  },
  {
    name: 'users update',
    usage: 'users update USER_ID --email EMAIL',
    summary: "change a user's email",
    options: { email: { type: 'string', required: true, description: 'the new email (unique, any case)' } },
    positionals: ['USER_ID'],
    run: (request, v, [id]) =>
      request('PATCH', `/admin/users/${encodeURIComponent(id!)}`, { email: v.email }),
    show: (r) => `user ${(r as UserJson).id} is now ${(r as UserJson).email}`,
  },
  {
    name: 'users revoke-app',
    usage: 'users revoke-app USER_ID CLIENT_ID',
    summary: "revoke a user's grant to one application (its tokens stop working at once)",
    options: {},
    positionals: ['USER_ID', 'CLIENT_ID'],
    run: async (request, _v, [id, clientId]) => {
      await request('DELETE', `/admin/users/${encodeURIComponent(id!)}/apps/${encodeURIComponent(clientId!)}`)
      return { revoked: { user_id: id, client_id: clientId } }
    },
    show: (r) => {
      const { revoked } = r as { revoked: { user_id: string; client_id: string } }
      return `revoked the grant of user ${revoked.user_id} to ${revoked.client_id}`
    },
  },
  {
    name: 'users reset-link',
    usage: 'users reset-link (--email EMAIL | --id USER_ID)',
    summary: 'issue a one-time password-reset link (30 minutes, single use) to send to the user',
    options: USER_OPTIONS,
    run: async (request, v) => {
      const id = await userIdFrom(request, v)
      return request('POST', `/admin/users/${encodeURIComponent(id)}/reset-link`)
    },
    show: (r) => {
      const link = r as { url: string; expires_at: string }
      return `${link.url}\n(valid until ${link.expires_at}, once; send it to the user, do not paste it in tickets or chat)`
    },
  },
]
