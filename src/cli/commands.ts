import type { createAdminClient } from './admin-client.js'

type Request = ReturnType<typeof createAdminClient>
type Values = Record<string, string | string[] | boolean | undefined>

export interface Command {
  /** e.g. "clients create" */
  name: string
  usage: string
  summary: string
  options: Record<
    string,
    { type: 'string' | 'boolean'; multiple?: boolean; required?: boolean; description: string }
  >
  positionals?: string[]
  run(request: Request, values: Values, positionals: string[]): Promise<unknown>
  /** Human-readable output; JSON when --json is given. */
  show(result: unknown): string
}

interface ClientJson {
  client_id: string
  name: string
  redirect_uris: string[]
  scopes: string[]
  created_at: string
  disabled_at: string | null
}

interface ResourceServerJson {
  id: string
  name: string
  resource: string | null
  scopes: string[]
  created_at: string
}

const showClient = (c: ClientJson) =>
  [
    `client_id:     ${c.client_id}`,
    `name:          ${c.name}`,
    `redirect_uris: ${c.redirect_uris.join(' ')}`,
    `scopes:        ${c.scopes.join(' ')}`,
    `created_at:    ${c.created_at}`,
    ...(c.disabled_at ? [`disabled_at:   ${c.disabled_at}`] : []),
  ].join('\n')

const table = (rows: string[][]): string => {
  if (rows.length === 0) return ''
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)))
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

export const COMMANDS: Command[] = [
  {
    name: 'clients create',
    usage: 'clients create --name NAME --redirect-uri URI [--redirect-uri URI2 ...] [--scope SCOPE ...]',
    summary: 'register an application; prints its client_id',
    options: {
      name: { type: 'string', required: true, description: 'the name users see on the consent page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        required: true,
        description: 'an exact redirect URI (1–10)',
      },
      scope: { type: 'string', multiple: true, description: 'an allowed scope (default: all four)' },
    },
    run: (request, v) =>
      request('POST', '/admin/clients', {
        name: v.name,
        redirect_uris: v['redirect-uri'],
        ...(v.scope ? { scopes: v.scope } : {}),
      }),
    show: (r) => showClient(r as ClientJson),
  },
  {
    name: 'clients list',
    usage: 'clients list',
    summary: 'list registered applications',
    options: {},
    run: (request) => request('GET', '/admin/clients'),
    show: (r) => {
      const clients = (r as { clients: ClientJson[] }).clients
      if (clients.length === 0) return 'no clients'
      return table([
        ['CLIENT_ID', 'NAME', 'STATUS', 'REDIRECT_URIS'],
        ...clients.map((c) => [
          c.client_id,
          c.name,
          c.disabled_at ? 'disabled' : 'active',
          c.redirect_uris.join(' '),
        ]),
      ])
    },
  },
  {
    name: 'clients show',
    usage: 'clients show CLIENT_ID',
    summary: 'show one application',
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('GET', `/admin/clients/${encodeURIComponent(id!)}`),
    show: (r) => showClient(r as ClientJson),
  },
  {
    name: 'clients disable',
    usage: 'clients disable CLIENT_ID',
    summary: 'disable an application and revoke all its grants',
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('DELETE', `/admin/clients/${encodeURIComponent(id!)}`),
    show: (r) => `disabled ${(r as ClientJson).client_id} at ${(r as ClientJson).disabled_at}`,
  },
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
    usage: 'users list',
    summary: 'list users',
    options: {},
    run: (request) => request('GET', '/admin/users'),
    show: (r) => {
      const users = (r as { users: { id: string; email: string; created_at: string }[] }).users
      if (users.length === 0) return 'no users'
      return table([['ID', 'EMAIL', 'CREATED_AT'], ...users.map((u) => [u.id, u.email, u.created_at])])
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
    name: 'keys list',
    usage: 'keys list',
    summary: 'list signing keys',
    options: {},
    run: (request) => request('GET', '/admin/keys'),
    show: (r) => {
      const keys = (
        r as { keys: { kid: string; alg: string; created_at: string; retired_at: string | null }[] }
      ).keys
      return table([
        ['KID', 'ALG', 'STATUS', 'CREATED_AT'],
        ...keys.map((k) => [k.kid, k.alg, k.retired_at ? `retired ${k.retired_at}` : 'active', k.created_at]),
      ])
    },
  },
  {
    name: 'keys rotate',
    usage: 'keys rotate',
    summary: 'make a new signing key active; the old one stays published until its tokens expire',
    options: {},
    run: (request) => request('POST', '/admin/keys/rotate'),
    show: (r) => `new active key ${(r as { kid: string }).kid}`,
  },
  {
    name: 'housekeeping run',
    usage: 'housekeeping run',
    summary: 'delete expired rows now (the HOUSEKEEPING_INTERVAL schedule does it too)',
    options: {},
    // A first run after months without one may take minutes: each batch is short, the run is not.
    run: (request) => request('POST', '/admin/housekeeping/run', undefined, 30 * 60_000),
    show: (r) => {
      const run = r as { outcome: string; deleted: Record<string, number>; duration_seconds: number }
      const rows = Object.entries(run.deleted).map(([table, n]) => [table, String(n)])
      return `${run.outcome} in ${run.duration_seconds} s\n${table([['TABLE', 'DELETED'], ...rows])}`
    },
  },
  {
    name: 'resource-servers create',
    usage: 'resource-servers create --name NAME [--resource URI --scope SCOPE [--scope SCOPE2 ...]]',
    summary: 'register a resource server (an API); prints its id and secret (shown once)',
    options: {
      name: {
        type: 'string',
        required: true,
        description: 'a name for the API (users see it on the consent page)',
      },
      resource: {
        type: 'string',
        description: 'its resource identifier (RFC 8707): the https URI clients name and tokens carry as aud',
      },
      scope: { type: 'string', multiple: true, description: 'a scope the API serves (with --resource)' },
    },
    run: (request, v) =>
      request('POST', '/admin/resource-servers', {
        name: v.name,
        ...(v.resource !== undefined ? { resource: v.resource } : {}),
        ...(v.scope ? { scopes: v.scope } : {}),
      }),
    show: (r) => {
      const s = r as ResourceServerJson & { secret: string }
      return [
        `id:       ${s.id}`,
        `secret:   ${s.secret}`,
        `resource: ${s.resource ?? '(none: tokens of the default audience)'}`,
        ...(s.scopes.length > 0 ? [`scopes:   ${s.scopes.join(' ')}`] : []),
        "(the secret is shown only now; store it in the resource server's configuration)",
      ].join('\n')
    },
  },
  {
    name: 'resource-servers list',
    usage: 'resource-servers list',
    summary: 'list resource servers with their resource and scopes (never their secrets)',
    options: {},
    run: (request) => request('GET', '/admin/resource-servers'),
    show: (r) => {
      const servers = (r as { resource_servers: ResourceServerJson[] }).resource_servers
      if (servers.length === 0) return 'no resource servers'
      return table([
        ['ID', 'NAME', 'RESOURCE', 'SCOPES'],
        ...servers.map((s) => [s.id, s.name, s.resource ?? '(default audience)', s.scopes.join(' ')]),
      ])
    },
  },
]
