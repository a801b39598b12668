import { CliError, type createAdminClient, EXIT_REFUSED, EXIT_USAGE } from './admin-client.js'

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
  require_dpop?: boolean
  homepage_url?: string | null
  privacy_policy_url?: string | null
  terms_url?: string | null
  description?: string | null
}

interface ResourceServerJson {
  id: string
  name: string
  resource: string | null
  scopes: string[]
  created_at: string
  disabled_at?: string | null
  previous_secret_expires_at?: string | null
}

interface SigningKeyJson {
  kid: string
  alg: string
  state: 'active' | 'next' | 'retired' | 'revoked'
  created_at: string
  activates_at: string
  retired_at: string | null
  revoked_at: string | null
}

interface RekeyJson {
  kek_id: string
  generated: boolean
  rekeyed: number
  already_current: number
  unreadable: string[]
  complete: boolean
}

/** When a key's state began (or, for the next key, begins). */
const keySince = (k: SigningKeyJson): string =>
  k.state === 'revoked' ? k.revoked_at! : k.state === 'retired' ? k.retired_at! : k.activates_at

const showClient = (c: ClientJson) =>
  [
    `client_id:     ${c.client_id}`,
    `name:          ${c.name}`,
    `redirect_uris: ${c.redirect_uris.join(' ')}`,
    `scopes:        ${c.scopes.join(' ')}`,
    ...(c.description ? [`description:   ${c.description}`] : []),
    ...(c.homepage_url ? [`homepage_url:  ${c.homepage_url}`] : []),
    ...(c.privacy_policy_url ? [`privacy:       ${c.privacy_policy_url}`] : []),
    ...(c.terms_url ? [`terms:         ${c.terms_url}`] : []),
    `created_at:    ${c.created_at}`,
    ...(c.require_dpop ? ['require_dpop:  true'] : []),
    ...(c.disabled_at ? [`disabled_at:   ${c.disabled_at}`] : []),
  ].join('\n')

/** The display metadata options of `clients update`, by API field. */
const METADATA_OPTIONS = {
  'homepage-url': 'homepage_url',
  'privacy-policy-url': 'privacy_policy_url',
  'terms-url': 'terms_url',
  description: 'description',
} as const

const showServer = (s: ResourceServerJson) =>
  [
    `id:          ${s.id}`,
    `name:        ${s.name}`,
    `resource:    ${s.resource ?? '(none: tokens of the default audience)'}`,
    ...(s.scopes.length > 0 ? [`scopes:      ${s.scopes.join(' ')}`] : []),
    `status:      ${s.disabled_at ? `disabled since ${s.disabled_at}` : 'enabled'}`,
    ...(s.previous_secret_expires_at ? [`old secret:  works until ${s.previous_secret_expires_at}`] : []),
    `created_at:  ${s.created_at}`,
  ].join('\n')

/** A number when the value is one (the server checks its range), else as given for the server to refuse. */
const wholeNumber = (value: unknown) =>
  typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value

const serverPath = (id: string | undefined, rest = '') =>
  `/admin/resource-servers/${encodeURIComponent(id!)}${rest}`

export const table = (rows: string[][]): string => {
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

interface UserJson {
  id: string
  email: string
  created_at: string
}

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

/** `?a=1&b=2` of the given values (repeated for lists); empty when none is given. */
function query(values: Record<string, string | string[] | boolean | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') params.append(name, value)
    else if (Array.isArray(value)) for (const v of value) params.append(name, v)
  }
  const text = params.toString()
  return text ? `?${text}` : ''
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

export const COMMANDS: Command[] = [
  {
    name: 'clients create',
    usage:
      'clients create --name NAME --redirect-uri URI [--redirect-uri URI2 ...] [--scope SCOPE ...] [--require-dpop]',
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
      'require-dpop': {
        type: 'boolean',
        description: 'refuse token requests without a DPoP proof (RFC 9449): every token bound to a key',
      },
    },
    run: (request, v) =>
      request('POST', '/admin/clients', {
        name: v.name,
        redirect_uris: v['redirect-uri'],
        ...(v.scope ? { scopes: v.scope } : {}),
        ...(v['require-dpop'] ? { require_dpop: true } : {}),
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
    name: 'clients update',
    usage:
      'clients update CLIENT_ID [--name NAME] [--redirect-uri URI ...] [--scope SCOPE ...] [--description TEXT] [--homepage-url URL] [--privacy-policy-url URL] [--terms-url URL] [--clear FIELD ...]',
    summary: 'change an application (only what is given); removing a scope revokes what was granted with it',
    options: {
      name: { type: 'string', description: 'the name users see on the consent page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        description: 'the full new list of redirect URIs (1–10); a URI left out stops working at once',
      },
      scope: {
        type: 'string',
        multiple: true,
        description: 'the full new list of scopes; tokens holding a scope left out stop working at once',
      },
      description: { type: 'string', description: 'plain text users see on the consent page (≤ 300)' },
      'homepage-url': { type: 'string', description: 'https link to the application' },
      'privacy-policy-url': { type: 'string', description: 'https link to its privacy policy' },
      'terms-url': { type: 'string', description: 'https link to its terms' },
      clear: {
        type: 'string',
        multiple: true,
        description: 'remove one of: description, homepage-url, privacy-policy-url, terms-url',
      },
    },
    positionals: ['CLIENT_ID'],
    run: (request, v, [id]) => {
      const body: Record<string, unknown> = {}
      if (v.name !== undefined) body.name = v.name
      if (v['redirect-uri'] !== undefined) body.redirect_uris = v['redirect-uri']
      if (v.scope !== undefined) body.scopes = v.scope
      for (const [option, field] of Object.entries(METADATA_OPTIONS))
        if (v[option] !== undefined) body[field] = v[option]
      for (const option of (v.clear as string[] | undefined) ?? []) {
        const field = METADATA_OPTIONS[option as keyof typeof METADATA_OPTIONS]
        // Sent as given: the server names the field it does not know.
        body[field ?? option] = null
      }
      return request('PATCH', `/admin/clients/${encodeURIComponent(id!)}`, body)
    },
    show: (r) => {
      const c = r as ClientJson & {
        narrowed: null | {
          grants_revoked: number
          grants_narrowed: number
          refresh_families_revoked: number
          refresh_families_continued: number
          codes_expired: number
        }
      }
      const n = c.narrowed
      return [
        showClient(c),
        ...(n
          ? [
              `narrowed:      ${n.grants_revoked} grants revoked, ${n.grants_narrowed} narrowed; ` +
                `${n.refresh_families_revoked} token families cut (${n.refresh_families_continued} continue with the remaining scopes); ` +
                `${n.codes_expired} codes expired`,
            ]
          : []),
      ].join('\n')
    },
  },
  {
    name: 'clients enable',
    usage: 'clients enable CLIENT_ID',
    summary: 'enable a disabled application again (grants revoked when it was disabled stay revoked)',
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('POST', `/admin/clients/${encodeURIComponent(id!)}/enable`),
    show: (r) => `enabled ${(r as ClientJson).client_id}; users authorize it again`,
  },
  {
    name: 'clients block',
    usage: 'clients block CLIENT_ID_URL [--reason TEXT]',
    summary:
      'block a client_id URL (a metadata-document application), seen or not: its grants are revoked, and it stays blocked whatever its document says',
    options: { reason: { type: 'string', description: 'why, for whoever reads the block list later' } },
    positionals: ['CLIENT_ID_URL'],
    run: (request, v, [id]) =>
      request('POST', '/admin/blocked-clients', {
        client_id: id,
        ...(typeof v.reason === 'string' ? { reason: v.reason } : {}),
      }),
    show: (r) => `blocked ${(r as { client_id: string }).client_id}`,
  },
  {
    name: 'clients blocked',
    usage: 'clients blocked',
    summary: 'list the blocked client_id URLs',
    options: {},
    run: (request) => request('GET', '/admin/blocked-clients'),
    show: (r) => {
      const list = (r as { blocked: { client_id: string; reason: string | null; blocked_at: string }[] })
        .blocked
      if (list.length === 0) return 'no blocked client_id URLs'
      return list
        .map((b) => `${b.client_id}  since ${b.blocked_at}${b.reason ? `  (${b.reason})` : ''}`)
        .join('\n')
    },
  },
  {
    name: 'clients unblock',
    usage: 'clients unblock CLIENT_ID_URL',
    summary:
      'take a client_id URL off the block list (its application stays disabled until `clients enable`)',
    options: {},
    positionals: ['CLIENT_ID_URL'],
    run: (request, _v, [id]) =>
      request('DELETE', `/admin/blocked-clients?client_id=${encodeURIComponent(id!)}`),
    show: () => 'unblocked',
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
    options: {
      email: { type: 'string', description: "the user's email (any case)" },
      id: { type: 'string', description: 'the user id, instead of --email' },
    },
    run: async (request, v) => {
      const id = await userIdFrom(request, v)
      return request('POST', `/admin/users/${encodeURIComponent(id)}/reset-link`)
    },
    show: (r) => {
      const link = r as { url: string; expires_at: string }
      return `${link.url}\n(valid until ${link.expires_at}, once; send it to the user, do not paste it in tickets or chat)`
    },
  },
  {
    name: 'keys list',
    usage: 'keys list',
    summary: 'list signing keys (active, next, retired, revoked)',
    options: {},
    run: (request) => request('GET', '/admin/keys'),
    show: (r) => {
      const keys = (r as { keys: SigningKeyJson[] }).keys
      return table([
        ['KID', 'ALG', 'STATE', 'SINCE', 'CREATED_AT'],
        ...keys.map((k) => [k.kid, k.alg, k.state, keySince(k), k.created_at]),
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
    name: 'keys revoke',
    usage: 'keys revoke KID',
    summary:
      'remove a leaked signing key now: out of the JWKS, refused by introspection, announced on the revocation feed',
    options: {},
    positionals: ['KID'],
    run: (request, _v, [kid]) => request('POST', `/admin/keys/${encodeURIComponent(kid!)}/revoke`),
    show: (r) => {
      const result = r as {
        revoked: SigningKeyJson
        replacement: SigningKeyJson | null
        already_revoked: boolean
      }
      if (result.already_revoked)
        return `key ${result.revoked.kid} was already revoked at ${result.revoked.revoked_at} (nothing changed)`
      return [
        `revoked key ${result.revoked.kid} at ${result.revoked.revoked_at}`,
        ...(result.replacement ? [`signing now with key ${result.replacement.kid}`] : []),
      ].join('\n')
    },
  },
  {
    name: 'keys rekey',
    usage: 'keys rekey',
    summary:
      're-encrypt every private signing key under KEY_ENCRYPTION_KEY (embedded mode: under a new key it makes)',
    options: {},
    run: async (request) => {
      const result = (await request('POST', '/admin/keys/rekey')) as RekeyJson
      if (!result.complete)
        throw new CliError(
          `re-encrypted ${result.rekeyed} keys, but ${result.unreadable.length} open with neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_PREVIOUS: ${result.unreadable.join(' ')}`,
          EXIT_REFUSED,
        )
      return result
    },
    show: (r) => {
      const result = r as RekeyJson
      return [
        `re-encrypted ${result.rekeyed} keys (${result.already_current} already were) under key-encryption key id ${result.kek_id}`,
        result.generated
          ? 'a new key-encryption key was made in DATA_DIR; the old one is deleted'
          : 'every key is under KEY_ENCRYPTION_KEY now: KEY_ENCRYPTION_KEY_PREVIOUS can be removed',
      ].join('\n')
    },
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
        ['ID', 'NAME', 'RESOURCE', 'SCOPES', 'STATUS'],
        ...servers.map((s) => [
          s.id,
          s.name,
          s.resource ?? '(default audience)',
          s.scopes.join(' ') || '-',
          s.disabled_at ? 'disabled' : 'enabled',
        ]),
      ])
    },
  },
  {
    name: 'resource-servers show',
    usage: 'resource-servers show ID',
    summary: 'show one resource server (never its secret)',
    options: {},
    positionals: ['ID'],
    run: (request, _v, [id]) => request('GET', serverPath(id)),
    show: (r) => showServer(r as ResourceServerJson),
  },
  {
    name: 'resource-servers update',
    usage: 'resource-servers update ID [--name NAME] [--scope SCOPE ...]',
    summary: 'rename a resource server or change the scopes it serves (its resource never changes)',
    options: {
      name: { type: 'string', description: 'the name users see on the consent page' },
      scope: {
        type: 'string',
        multiple: true,
        description: 'the full new list of scopes it serves (only one with a resource)',
      },
    },
    positionals: ['ID'],
    run: (request, v, [id]) =>
      request('PATCH', serverPath(id), {
        ...(v.name !== undefined ? { name: v.name } : {}),
        ...(v.scope !== undefined ? { scopes: v.scope } : {}),
      }),
    show: (r) => showServer(r as ResourceServerJson),
  },
  {
    name: 'resource-servers disable',
    usage: 'resource-servers disable ID',
    summary: 'refuse its introspection and event-feed calls (401) and stop issuing tokens for it',
    options: {},
    positionals: ['ID'],
    run: (request, _v, [id]) => request('POST', serverPath(id, '/disable')),
    show: (r) => `disabled ${(r as ResourceServerJson).id} at ${(r as ResourceServerJson).disabled_at}`,
  },
  {
    name: 'resource-servers enable',
    usage: 'resource-servers enable ID',
    summary: 'enable a disabled resource server again',
    options: {},
    positionals: ['ID'],
    run: (request, _v, [id]) => request('POST', serverPath(id, '/enable')),
    show: (r) => `enabled ${(r as ResourceServerJson).id}`,
  },
  {
    name: 'resource-servers delete',
    usage: 'resource-servers delete ID',
    summary: 'delete a resource server; token families that named its resource are revoked',
    options: {},
    positionals: ['ID'],
    run: (request, _v, [id]) => request('DELETE', serverPath(id)),
    show: (r) => {
      const s = r as ResourceServerJson & {
        deleted: { refresh_families_revoked: number; grants_narrowed: number; codes_expired: number }
      }
      return (
        `deleted ${s.id} (${s.name}); ${s.deleted.refresh_families_revoked} token families revoked, ` +
        `${s.deleted.grants_narrowed} grants no longer name ${s.resource ?? 'it'}, ${s.deleted.codes_expired} codes expired`
      )
    },
  },
  {
    name: 'resource-servers rotate-secret',
    usage: 'resource-servers rotate-secret ID [--overlap-seconds N]',
    summary: 'give a resource server a new secret (shown once); the old one works for the overlap',
    options: {
      'overlap-seconds': {
        type: 'string',
        description: 'how long the old secret keeps working (default 3600; 0: stops at once; ≤ 604800)',
      },
    },
    positionals: ['ID'],
    run: (request, v, [id]) =>
      request(
        'POST',
        serverPath(id, '/secret'),
        v['overlap-seconds'] !== undefined ? { overlap_seconds: wholeNumber(v['overlap-seconds']) } : {},
      ),
    show: (r) => {
      const s = r as ResourceServerJson & { secret: string }
      return [
        `id:         ${s.id}`,
        `secret:     ${s.secret}`,
        s.previous_secret_expires_at
          ? `old secret: works until ${s.previous_secret_expires_at}`
          : 'old secret: no longer works',
        "(the secret is shown only now; store it in the resource server's configuration)",
      ].join('\n')
    },
  },
]
