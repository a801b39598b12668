import { type Command, table } from './command.js'

interface ResourceServerJson {
  id: string
  name: string
  resource: string | null
  scopes: string[]
  created_at: string
  disabled_at?: string | null
  previous_secret_expires_at?: string | null
}

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

/** `resource-servers …`: registering APIs, their scopes and secrets. */
export const RESOURCE_SERVER_COMMANDS: Command[] = [
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
