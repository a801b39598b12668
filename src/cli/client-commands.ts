import { type Command, table } from './command.js'

interface ClientJson {
  client_id: string
  name: string
  redirect_uris: string[]
  scopes: string[]
  default_scopes?: string[]
  created_at: string
  disabled_at: string | null
  require_dpop?: boolean
  require_pushed_authorization_requests?: boolean
  grant_types?: string[]
  homepage_url?: string | null
  privacy_policy_url?: string | null
  terms_url?: string | null
  description?: string | null
  kind?: string
  standing?: string
  standing_override?: string | null
  host?: string
}

/** kind/standing, e.g. "dynamic/unverified", and "(operator)" when the operator decided it. */
const standingText = (c: ClientJson) =>
  `${c.kind ?? '?'}/${c.standing ?? '?'}${c.standing_override ? ' (operator)' : ''}`

const showClient = (c: ClientJson) =>
  [
    `client_id:     ${c.client_id}`,
    `name:          ${c.name}`,
    `standing:      ${standingText(c)}`,
    ...(c.host ? [`host:          ${c.host}`] : []),
    `redirect_uris: ${c.redirect_uris.length > 0 ? c.redirect_uris.join(' ') : '(none: no redirect flow)'}`,
    `scopes:        ${c.scopes.join(' ')}`,
    ...(c.default_scopes ? [`default_scopes: ${c.default_scopes.join(' ')}`] : []),
    ...(c.description ? [`description:   ${c.description}`] : []),
    ...(c.homepage_url ? [`homepage_url:  ${c.homepage_url}`] : []),
    ...(c.privacy_policy_url ? [`privacy:       ${c.privacy_policy_url}`] : []),
    ...(c.terms_url ? [`terms:         ${c.terms_url}`] : []),
    `created_at:    ${c.created_at}`,
    ...(c.require_dpop ? ['require_dpop:  true'] : []),
    ...(c.require_pushed_authorization_requests ? ['require_par:   true'] : []),
    ...(c.grant_types ? [`grant_types:   ${c.grant_types.join(' ')}`] : []),
    ...(c.disabled_at ? [`disabled_at:   ${c.disabled_at}`] : []),
  ].join('\n')

/** The display metadata options of `clients update`, by API field. */
const METADATA_OPTIONS = {
  'homepage-url': 'homepage_url',
  'privacy-policy-url': 'privacy_policy_url',
  'terms-url': 'terms_url',
  description: 'description',
} as const

/** What `clients update --clear` removes, by API field: the metadata, and the default scopes (then all). */
const CLEARABLE = { ...METADATA_OPTIONS, 'default-scopes': 'default_scopes' } as const

/** `--default-scope`: what a request without `scope` gets (RFC 6749 §3.3), among the allowed scopes. */
const DEFAULT_SCOPE_OPTION = {
  type: 'string',
  multiple: true,
  description: 'a scope a request without `scope` gets (default: all its allowed scopes)',
} as const

/** `clients …`: registering, changing, disabling and blocking applications. */
export const CLIENT_COMMANDS: Command[] = [
  {
    name: 'clients create',
    usage:
      'clients create --name NAME [--redirect-uri URI ...] [--scope SCOPE ...] [--default-scope SCOPE ...] [--grant-type TYPE ...] [--require-dpop] [--require-par]',
    summary: 'register an application; prints its client_id',
    options: {
      name: { type: 'string', required: true, description: 'the name users see on the consent page' },
      'redirect-uri': {
        type: 'string',
        multiple: true,
        description:
          'an exact redirect URI (1–10; none for a device-only client, --grant-type without authorization_code)',
      },
      scope: { type: 'string', multiple: true, description: 'an allowed scope (default: all four)' },
      'default-scope': DEFAULT_SCOPE_OPTION,
      'grant-type': {
        type: 'string',
        multiple: true,
        description:
          'an allowed grant type (default: authorization_code refresh_token; add urn:ietf:params:oauth:grant-type:device_code for the device grant)',
      },
      'require-dpop': {
        type: 'boolean',
        description: 'refuse token requests without a DPoP proof (RFC 9449): every token bound to a key',
      },
      'require-par': {
        type: 'boolean',
        description: 'refuse authorization requests that were not pushed first (RFC 9126)',
      },
    },
    run: (request, v) =>
      request('POST', '/admin/clients', {
        name: v.name,
        ...(v['redirect-uri'] ? { redirect_uris: v['redirect-uri'] } : {}),
        ...(v.scope ? { scopes: v.scope } : {}),
        ...(v['default-scope'] ? { default_scopes: v['default-scope'] } : {}),
        ...(v['grant-type'] ? { grant_types: v['grant-type'] } : {}),
        ...(v['require-dpop'] ? { require_dpop: true } : {}),
        ...(v['require-par'] ? { require_pushed_authorization_requests: true } : {}),
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
        ['CLIENT_ID', 'NAME', 'KIND/STANDING', 'STATUS', 'REDIRECT_URIS'],
        ...clients.map((c) => [
          c.client_id,
          c.name,
          standingText(c),
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
      'clients update CLIENT_ID [--name NAME] [--redirect-uri URI ...] [--scope SCOPE ...] [--default-scope SCOPE ...] [--grant-type TYPE ...] [--description TEXT] [--homepage-url URL] [--privacy-policy-url URL] [--terms-url URL] [--clear FIELD ...]',
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
      'default-scope': DEFAULT_SCOPE_OPTION,
      'grant-type': {
        type: 'string',
        multiple: true,
        description:
          'the full new list of grant types (urn:ietf:params:oauth:grant-type:device_code: the device grant)',
      },
      description: { type: 'string', description: 'plain text users see on the consent page (≤ 300)' },
      'homepage-url': { type: 'string', description: 'https link to the application' },
      'privacy-policy-url': { type: 'string', description: 'https link to its privacy policy' },
      'terms-url': { type: 'string', description: 'https link to its terms' },
      clear: {
        type: 'string',
        multiple: true,
        description:
          'remove one of: description, homepage-url, privacy-policy-url, terms-url, default-scopes (then all its scopes)',
      },
    },
    positionals: ['CLIENT_ID'],
    run: (request, v, [id]) => {
      const body: Record<string, unknown> = {}
      if (v.name !== undefined) body.name = v.name
      if (v['redirect-uri'] !== undefined) body.redirect_uris = v['redirect-uri']
      if (v.scope !== undefined) body.scopes = v.scope
      if (v['default-scope'] !== undefined) body.default_scopes = v['default-scope']
      if (v['grant-type'] !== undefined) body.grant_types = v['grant-type']
      for (const [option, field] of Object.entries(METADATA_OPTIONS))
        if (v[option] !== undefined) body[field] = v[option]
      for (const option of (v.clear as string[] | undefined) ?? []) {
        const field = CLEARABLE[option as keyof typeof CLEARABLE]
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
    name: 'clients verify',
    usage: 'clients verify CLIENT_ID',
    summary: 'verify an application that came in by itself: every page shows it as verified',
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('POST', `/admin/clients/${encodeURIComponent(id!)}/verify`),
    show: (r) => `${(r as ClientJson).client_id} is now ${standingText(r as ClientJson)}`,
  },
  {
    name: 'clients unverify',
    usage: 'clients unverify CLIENT_ID',
    summary: "take an application's standing away: every page shows it as unverified",
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('POST', `/admin/clients/${encodeURIComponent(id!)}/unverify`),
    show: (r) => `${(r as ClientJson).client_id} is now ${standingText(r as ClientJson)}`,
  },
  {
    name: 'clients reset-standing',
    usage: 'clients reset-standing CLIENT_ID',
    summary: "forget the operator's decision: the standing follows from how the application came in",
    options: {},
    positionals: ['CLIENT_ID'],
    run: (request, _v, [id]) => request('DELETE', `/admin/clients/${encodeURIComponent(id!)}/standing`),
    show: (r) => `${(r as ClientJson).client_id} is now ${standingText(r as ClientJson)}`,
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
]
