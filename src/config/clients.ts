import { z } from 'zod'
import { scopePolicyFor } from '../clients/scope-policy.js'
import { isKnownScope } from '../lib/scopes.js'
import { booleanish, bytes, ConfigError, count, optionalString, secret, seconds } from './fields.js'

/** A comma-separated list of host names, `*.example.com` for every subdomain; empty: none. */
const hostList = z
  .string()
  .default('')
  .transform((v) =>
    v
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
  )
  .refine(
    (hosts) => hosts.every((h) => /^(\*\.)?[a-z0-9.-]+(:[0-9]{1,5})?$/.test(h)),
    'host names separated by commas, such as app.example or *.example.com',
  )
/** Space-separated scope names; empty: none given. */
const scopeList = z
  .string()
  .default('')
  .transform((v) => v.split(' ').filter((s) => s !== ''))

// Applications that arrive without the operator (docs/operating.md "Applications that register
// themselves"): Client ID Metadata Documents and dynamic registration (RFC 7591).
export const clientSchema = z.object({
  /** Accept https client_id URLs naming a Client ID Metadata Document. */
  CLIENT_METADATA_DOCUMENTS: booleanish('true'),
  /** Hosts whose documents are accepted (comma-separated; `*.example.com` for its subdomains); empty: any. */
  CLIENT_METADATA_ALLOWED_HOSTS: hostList,
  /** Hosts whose documents are refused (same form); checked before the allow list. */
  CLIENT_METADATA_DENIED_HOSTS: hostList,
  /** The scopes such applications (and dynamic registrations) may ask for, space-separated; empty: all. */
  CLIENT_METADATA_SCOPES: scopeList,
  /** The scopes a dynamic registration may ask for (clients/scope-policy.ts); empty: CLIENT_METADATA_SCOPES. */
  DYNAMIC_REGISTRATION_SCOPES: scopeList,
  /**
   * What a request without `scope` gets from a metadata-document app (or a dynamic registration)
   * that stated no scope of its own: within the matching maximum above; empty: all of it.
   */
  CLIENT_METADATA_DEFAULT_SCOPES: scopeList,
  DYNAMIC_REGISTRATION_DEFAULT_SCOPES: scopeList,
  /** How long a fetched document is kept, at least and at most, whatever its Cache-Control says. */
  CLIENT_METADATA_CACHE_MIN: seconds(300),
  CLIENT_METADATA_CACHE_MAX: seconds(86_400),
  /** How long past its freshness a kept copy still serves while the document cannot be fetched. */
  CLIENT_METADATA_STALE_MAX: seconds(3600),
  /** A fetch gets this many milliseconds, headers and body together, and this many bytes. */
  CLIENT_METADATA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(3000),
  CLIENT_METADATA_MAX_BYTES: bytes(5120, 512, 65_536),
  /** Document fetches at once in a process; more wait for a slot within their own time limit. */
  CLIENT_METADATA_FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Test only, refused with NODE_ENV=production: a PEM file of a CA whose certificates are trusted for
   * documents, and loopback addresses allowed, so that tests serve documents from a local HTTPS server.
   */
  CLIENT_METADATA_TEST_CA: optionalString,
  /** Dynamic client registration (RFC 7591): `open`, `token` (an initial access token required), `off`. */
  DYNAMIC_REGISTRATION: z.enum(['open', 'token', 'off']).default('open'),
  /** The initial access token DYNAMIC_REGISTRATION=token asks for (Authorization: Bearer). */
  DYNAMIC_REGISTRATION_TOKEN: secret(32),
  /**
   * Names (brands) no self-registered or metadata-document app may call itself, beside the service's
   * own and those of the apps the operator registered: comma-separated; look-alikes count (UTS #39).
   */
  RESERVED_CLIENT_NAMES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    )
    .refine(
      (names) => names.every((n) => n.length <= 100),
      'names of at most 100 characters, separated by commas',
    ),
  /** Registrations per client address per hour. */
  DYNAMIC_REGISTRATION_RATE_LIMIT: count(20),
  /** At most this many registrations that never obtained a grant at once; more are refused until housekeeping. */
  DYNAMIC_REGISTRATION_MAX_UNUSED: count(1000),
  /** A registration with no grant used for this many seconds is deleted by housekeeping. */
  DYNAMIC_REGISTRATION_UNUSED_TTL: seconds(7 * 24 * 3600),
})

export function checkClientSettings(e: z.output<typeof clientSchema>, nodeEnv: string): void {
  if (e.CLIENT_METADATA_TEST_CA !== undefined && nodeEnv === 'production') {
    throw new ConfigError(
      'CLIENT_METADATA_TEST_CA: expected unset with NODE_ENV=production (it is for tests only)',
    )
  }
  if (e.DYNAMIC_REGISTRATION === 'token' && e.DYNAMIC_REGISTRATION_TOKEN === undefined) {
    throw new ConfigError(
      'DYNAMIC_REGISTRATION_TOKEN: expected a token of at least 32 characters with DYNAMIC_REGISTRATION=token',
    )
  }
  if (e.CLIENT_METADATA_CACHE_MIN > e.CLIENT_METADATA_CACHE_MAX) {
    throw new ConfigError(
      'CLIENT_METADATA_CACHE_MIN: expected a value no larger than CLIENT_METADATA_CACHE_MAX',
    )
  }
  for (const name of [
    'CLIENT_METADATA_SCOPES',
    'DYNAMIC_REGISTRATION_SCOPES',
    'CLIENT_METADATA_DEFAULT_SCOPES',
    'DYNAMIC_REGISTRATION_DEFAULT_SCOPES',
  ] as const) {
    const unknownScope = e[name].find((scope) => !isKnownScope(scope))
    if (unknownScope !== undefined)
      throw new ConfigError(`${name}: expected known scopes, got ${JSON.stringify(unknownScope)}`)
  }
  // Each default within its kind's maximum, as scopePolicyFor reads them.
  const policyConfig = {
    clientMetadataScopes: e.CLIENT_METADATA_SCOPES,
    dynamicRegistrationScopes: e.DYNAMIC_REGISTRATION_SCOPES,
    clientMetadataDefaultScopes: e.CLIENT_METADATA_DEFAULT_SCOPES,
    dynamicRegistrationDefaultScopes: e.DYNAMIC_REGISTRATION_DEFAULT_SCOPES,
  }
  for (const [name, kind, maximumName] of [
    ['CLIENT_METADATA_DEFAULT_SCOPES', 'metadata_document', 'CLIENT_METADATA_SCOPES'],
    [
      'DYNAMIC_REGISTRATION_DEFAULT_SCOPES',
      'dynamic',
      e.DYNAMIC_REGISTRATION_SCOPES.length > 0 ? 'DYNAMIC_REGISTRATION_SCOPES' : 'CLIENT_METADATA_SCOPES',
    ],
  ] as const) {
    const { maximum } = scopePolicyFor(policyConfig, kind)
    const outside = e[name].find((scope) => !maximum.includes(scope))
    if (outside !== undefined)
      throw new ConfigError(
        `${name}: expected scopes within ${maximumName} (${maximum.join(' ')}), got ${JSON.stringify(outside)}`,
      )
  }
}
