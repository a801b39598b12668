import { z } from 'zod'
import { isKnownScope } from './lib/scopes.js'

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)
const seconds = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(10 * 365 * 24 * 3600)
    .default(fallback)
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))
const secret = (minLength: number) =>
  optionalString.pipe(z.string().min(minLength, `at least ${minLength} characters`).optional())

/** A 256-bit key: 64 hex characters or 43 base64url characters. */
const keyEncryptionKey = optionalString.pipe(
  z
    .string()
    .regex(
      /^([0-9a-fA-F]{64}|[A-Za-z0-9_-]{43}=?)$/,
      '32 bytes as 64 hex characters or 43 base64url characters',
    )
    .optional(),
)

const DURATION_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const
/** The shortest rotation period: the next key is published for part of it before it signs. */
const MIN_ROTATION_SECONDS = 3600

/** SIGNING_KEY_ROTATION: `off` (0) or a duration of at least an hour (`30d`, `12h`, `90m`); unset → undefined. */
const rotationPeriod = optionalString.pipe(
  z
    .string()
    .regex(/^(off|0|[1-9][0-9]{0,6}[smhdw])$/, 'a duration such as 30d, 12h or 90m, or "off"')
    .transform((v) =>
      v === 'off' || v === '0'
        ? 0
        : Number(v.slice(0, -1)) * DURATION_SECONDS[v.slice(-1) as keyof typeof DURATION_SECONDS],
    )
    .refine(
      (v) => v === 0 || (v >= MIN_ROTATION_SECONDS && v <= 10 * 365 * 86_400),
      'a duration from 1h to 3650d, or "off"',
    )
    .optional(),
)

const booleanish = (fallback: 'true' | 'false') =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .default(fallback)
    .transform((v) => (v === '' ? fallback === 'true' : v === 'true' || v === '1' || v === 'yes'))

/** A count of requests or failures: 1 to a million. */
const count = (fallback: number) => z.coerce.number().int().min(1).max(1_000_000).default(fallback)
const bytes = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback)

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

/** SIGNING_KEY_ROTATION when unset with DATABASE_URL: 30 days. */
export const DEFAULT_ROTATION_SECONDS = 30 * 86_400

/** Every setting linkauth reads from the environment, with its default. */
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port(3000),
  /** Loopback on the embedded database, every interface with DATABASE_URL (loadConfig); set to choose. */
  HOST: optionalString.pipe(z.string().min(1).optional()),
  ISSUER: z
    .url({
      protocol: /^https?$/,
      error: 'an http(s) URL without query or fragment, e.g. https://auth.example.com',
    })
    .refine((v) => !v.includes('?') && !v.includes('#'), 'an http(s) URL without query or fragment')
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
      .optional(),
  ),
  /** Where migrations run: the role that owns the tables; DATABASE_URL (the serving role) when unset. */
  DATABASE_MIGRATION_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
      .optional(),
  ),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  // PgBouncer and other transaction-pooling proxies (docs/operating.md): the LISTEN connection's own
  // URL (direct or a session-mode pool), and named prepared statements off where the pooler lacks them.
  /** Where the one LISTEN connection per process goes; DATABASE_URL when unset. */
  DATABASE_LISTEN_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
      .optional(),
  ),
  /** Named prepared statements (parsed once per connection); false behind a pooler without them. */
  DATABASE_PREPARED_STATEMENTS: booleanish('true'),
  /** Server processes (node:cluster); 'auto' is one per core. Needs DATABASE_URL when above 1. */
  WORKERS: z
    .union(
      [z.literal('auto'), z.coerce.number().int().min(1).max(64)],
      'a whole number from 1 to 64, or "auto"',
    )
    .default(1),
  DATA_DIR: z.string().min(1).default('./.data'),
  ADMIN_PORT: port(3001),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_TOKEN: secret(32),
  /** Bearer token for GET /metrics on the public listener; without it the route does not exist there. */
  METRICS_TOKEN: secret(32),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  COOKIE_SECRET: secret(32),
  KEY_ENCRYPTION_KEY: keyEncryptionKey,
  /** The key-encryption key before the current one: only decrypts, while `linkauth keys rekey` re-encrypts. */
  KEY_ENCRYPTION_KEY_PREVIOUS: keyEncryptionKey,
  /** Scheduled signing-key rotation (`30d`, `off`); unset: 30d with DATABASE_URL, off on the embedded database. */
  SIGNING_KEY_ROTATION: rotationPeriod,
  AUTH_CODE_TTL: seconds(60),
  ACCESS_TOKEN_TTL: seconds(600),
  REFRESH_TOKEN_TTL: seconds(30 * 24 * 3600),
  REFRESH_TOKEN_ABSOLUTE_TTL: seconds(180 * 24 * 3600),
  /**
   * Seconds after a refresh token rotated during which its client may present it again and get
   * tokens (a retry, not theft); 0 turns the window off. At most 5 minutes: longer is a second life.
   */
  REFRESH_REUSE_WINDOW: z.coerce.number().int().min(0).max(300).default(10),
  SESSION_TTL: seconds(12 * 3600),
  ACCESS_TOKEN_AUDIENCE: optionalString.pipe(z.string().min(1).optional()),
  /**
   * RFC 8707: every authorization request must name the API(s) it is for (`invalid_target` when it
   * names none), so that no token is issued for all the APIs serving its scopes. Off by default.
   */
  REQUIRE_RESOURCE: booleanish('false'),
  SIGNING_ALG: z.enum(['ES256', 'EdDSA', 'RS256']).default('ES256'),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// URL')
      .optional(),
  ),
  // Below the server's 60 s socket inactivity timeout, which would cut a held poll.
  /** How long a revocation-feed poll is held open when there is nothing to deliver. */
  EVENTS_MAX_WAIT_SECONDS: z.coerce.number().int().min(1).max(50).default(25),
  /** A revocation-feed stream not polled for this long is deleted. */
  EVENT_STREAM_IDLE_SECONDS: seconds(600),
  /** At most this many live (not idle) streams per resource server. */
  EVENT_STREAMS_PER_RESOURCE_SERVER: count(100),
  TRUST_PROXY: booleanish('false'),
  /** Off only for benchmarks: no rate limit is registered at all. */
  RATE_LIMITS: booleanish('true'),
  /** Prefix of every rate-limit key in Redis, so deployments (and test runs) sharing a Redis do not collide. */
  RATE_LIMIT_REDIS_PREFIX: z.string().min(1).max(100).default('linkauth:rl:'),
  /** POST /login per client address per minute, every attempt counted. */
  SIGN_IN_RATE_LIMIT: count(30),
  /** Failed sign-ins per (account, address or known device) before the growing delay starts. */
  SIGN_IN_FREE_FAILURES: count(5),
  /** Cap of the growing delay, seconds. */
  SIGN_IN_MAX_DELAY: seconds(900),
  /** How long failures per (account, client) are remembered after the last one, seconds. */
  SIGN_IN_FAILURE_TTL: seconds(24 * 3600),
  /** Failed sign-ins per account from devices it does not know, per SIGN_IN_ACCOUNT_WINDOW. */
  SIGN_IN_ACCOUNT_LIMIT: count(20),
  SIGN_IN_ACCOUNT_WINDOW: seconds(900),
  /** Lifetime of the known-device cookie set at a successful sign-in, seconds. */
  KNOWN_DEVICE_TTL: seconds(180 * 24 * 3600),
  /** Requests per minute: authorize per address; token and revocation per (client_id, address). */
  AUTHORIZE_RATE_LIMIT: count(60),
  TOKEN_RATE_LIMIT: count(120),
  REVOCATION_RATE_LIMIT: count(60),
  /** Introspection requests per (resource server, address) per minute. */
  INTROSPECTION_RATE_LIMIT: count(60_000),
  /** OAuth API requests per address per minute that name no client or fail client authentication. */
  UNIDENTIFIED_RATE_LIMIT: count(30),
  /** Admin API requests per address per minute that fail the admin token; then the address waits. */
  ADMIN_AUTH_FAILURE_LIMIT: count(10),
  /** Request body limit, bytes. */
  BODY_LIMIT: bytes(64 * 1024, 1024, 10 * 1024 * 1024),
  /** Request line and headers together, bytes; larger → 431. */
  MAX_HEADER_SIZE: bytes(16 * 1024, 4 * 1024, 64 * 1024),
  /** Seconds a client has to send the request headers (slowloris), the whole request, and between keep-alive requests. */
  HEADERS_TIMEOUT: seconds(10),
  REQUEST_TIMEOUT: seconds(30),
  KEEP_ALIVE_TIMEOUT: seconds(5),
  // Housekeeping (docs/operating.md): seconds between runs, 0 for none; rows per batch; how long a
  // refresh family is kept after its revocation or expiry, so that a replay is still recognised.
  HOUSEKEEPING_INTERVAL: z.coerce.number().int().min(0).max(86_400).default(300),
  HOUSEKEEPING_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(1000),
  HOUSEKEEPING_REPLAY_HORIZON: z.coerce
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 24 * 3600)
    .default(7 * 24 * 3600),
  // DPoP (RFC 9449, docs/integrating.md "DPoP"): whether every token request must carry a proof,
  // and whether proofs must carry a server nonce (use_dpop_nonce with a DPoP-Nonce header first).
  DPOP_REQUIRED: booleanish('false'),
  DPOP_NONCE_REQUIRED: booleanish('false'),
  // Passkeys (docs/operating.md "Passkeys"): unset → on with an https issuer or http://localhost.
  PASSKEYS: optionalString.pipe(z.enum(['on', 'off']).optional()),
  /** The WebAuthn RP ID: the issuer's host name or a registrable suffix of it; unset → the issuer's host. */
  PASSKEY_RP_ID: optionalString.pipe(
    z
      .string()
      .regex(
        /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'a lower-case host name',
      )
      .optional(),
  ),
  /** Audit trail: rows older than this many seconds (default 400 days) are deleted by housekeeping. */
  AUDIT_RETENTION: seconds(400 * 24 * 3600),
  // Applications that arrive without the operator (docs/operating.md "Applications that register
  // themselves"): Client ID Metadata Documents and dynamic registration (RFC 7591).
  /** Accept https client_id URLs naming a Client ID Metadata Document. */
  CLIENT_METADATA_DOCUMENTS: booleanish('true'),
  /** Hosts whose documents are accepted (comma-separated; `*.example.com` for its subdomains); empty: any. */
  CLIENT_METADATA_ALLOWED_HOSTS: hostList,
  /** Hosts whose documents are refused (same form); checked before the allow list. */
  CLIENT_METADATA_DENIED_HOSTS: hostList,
  /** The scopes such applications (and dynamic registrations) may ask for, space-separated; empty: all. */
  CLIENT_METADATA_SCOPES: scopeList,
  /** How long a fetched document is kept, at least and at most, whatever its Cache-Control says. */
  CLIENT_METADATA_CACHE_MIN: seconds(300),
  CLIENT_METADATA_CACHE_MAX: seconds(86_400),
  /** How long past its freshness a kept copy still serves while the document cannot be fetched. */
  CLIENT_METADATA_STALE_MAX: seconds(3600),
  /** A fetch gets this many milliseconds, headers and body together, and this many bytes. */
  CLIENT_METADATA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(10_000).default(3000),
  CLIENT_METADATA_MAX_BYTES: bytes(5120, 512, 65_536),
  /**
   * Test only, refused with NODE_ENV=production: a PEM file of a CA whose certificates are trusted for
   * documents, and loopback addresses allowed, so that tests serve documents from a local HTTPS server.
   */
  CLIENT_METADATA_TEST_CA: optionalString,
  /** Dynamic client registration (RFC 7591): `open`, `token` (an initial access token required), `off`. */
  DYNAMIC_REGISTRATION: z.enum(['open', 'token', 'off']).default('open'),
  /** The initial access token DYNAMIC_REGISTRATION=token asks for (Authorization: Bearer). */
  DYNAMIC_REGISTRATION_TOKEN: secret(32),
  /** Registrations per client address per hour. */
  DYNAMIC_REGISTRATION_RATE_LIMIT: count(20),
  /** At most this many registrations that never obtained a grant at once; more are refused until housekeeping. */
  DYNAMIC_REGISTRATION_MAX_UNUSED: count(1000),
  /** A registration with no grant used for this many seconds is deleted by housekeeping. */
  DYNAMIC_REGISTRATION_UNUSED_TTL: seconds(7 * 24 * 3600),
})

type Settings = z.output<typeof configSchema>

/** REFRESH_TOKEN_TTL → refreshTokenTtl: each setting's name in Config, derived from its variable. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}`
  : Lowercase<S>
/** NODE_ENV is `env`; every other setting is its variable in camelCase. configKey is the same at run time. */
type ConfigKey<S extends string> = S extends 'NODE_ENV' ? 'env' : CamelCase<S>

function configKey(name: string): string {
  if (name === 'NODE_ENV') return 'env'
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
}

/** Settings loadConfig fills in from others when they are not given. */
type Derived = {
  host: string
  issuer: string
  accessTokenAudience: string
  /** Seconds between scheduled signing-key rotations; 0 is off. */
  signingKeyRotation: number
  /** Whether users may register and sign in with passkeys (PASSKEYS, or its default). */
  passkeys: boolean
  /** The WebAuthn relying party ID passkeys are bound to (PASSKEY_RP_ID or the issuer's host). */
  passkeyRpId: string
}

/**
 * Every setting, typed by the schema: a setting is added to configSchema and nowhere else. The
 * schema's variables become camelCase properties (SIGN_IN_MAX_DELAY → signInMaxDelay; see ConfigKey).
 */
export type Config = Readonly<
  Omit<{ [K in keyof Settings as ConfigKey<K>]: Settings[K] }, keyof Derived> & Derived
>

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads the environment once into a frozen Config; a bad value throws ConfigError with one readable line. */
export function loadConfig(env: Record<string, string | undefined>): Readonly<Config> {
  const result = configSchema.safeParse(env)
  if (!result.success) {
    const issue = result.error.issues[0]!
    const name = String(issue.path[0] ?? 'environment')
    const got = env[name]
    const shown =
      name.includes('TOKEN') || name.includes('SECRET') || name.includes('KEY')
        ? '(hidden)'
        : JSON.stringify(got)
    throw new ConfigError(`${name}: expected ${describeIssue(issue)}, got ${shown}`)
  }
  const e = result.data
  const issuer = e.ISSUER ?? `http://localhost:${e.PORT}`
  if (e.WORKERS !== 1 && !e.DATABASE_URL) {
    throw new ConfigError(
      'WORKERS: expected 1 without DATABASE_URL (the embedded database serves one process)',
    )
  }
  if (e.REFRESH_TOKEN_ABSOLUTE_TTL < e.REFRESH_TOKEN_TTL) {
    throw new ConfigError('REFRESH_TOKEN_ABSOLUTE_TTL: expected a value no smaller than REFRESH_TOKEN_TTL')
  }
  if (e.EVENT_STREAM_IDLE_SECONDS < 2 * e.EVENTS_MAX_WAIT_SECONDS) {
    throw new ConfigError(
      'EVENT_STREAM_IDLE_SECONDS: expected at least twice EVENTS_MAX_WAIT_SECONDS (a stream is polled again after each wait)',
    )
  }
  if (e.HEADERS_TIMEOUT > e.REQUEST_TIMEOUT) {
    throw new ConfigError('HEADERS_TIMEOUT: expected a value no larger than REQUEST_TIMEOUT')
  }
  if (e.CLIENT_METADATA_TEST_CA !== undefined && e.NODE_ENV === 'production') {
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
  const unknownScope = e.CLIENT_METADATA_SCOPES.find((scope) => !isKnownScope(scope))
  if (unknownScope !== undefined) {
    throw new ConfigError(
      `CLIENT_METADATA_SCOPES: expected known scopes, got ${JSON.stringify(unknownScope)}`,
    )
  }
  const passkeys = passkeySettings(issuer, e.PASSKEYS, e.PASSKEY_RP_ID)
  // Every key of the schema, the unset optional ones too (zod leaves those out of its output).
  const settings = Object.fromEntries(
    Object.keys(configSchema.shape).map((name) => [configKey(name), e[name as keyof Settings]]),
  )
  return Object.freeze({
    ...settings,
    host: e.HOST ?? (e.DATABASE_URL ? '0.0.0.0' : '127.0.0.1'),
    issuer,
    accessTokenAudience: e.ACCESS_TOKEN_AUDIENCE ?? `${issuer}/api`,
    signingKeyRotation: e.SIGNING_KEY_ROTATION ?? (e.DATABASE_URL ? DEFAULT_ROTATION_SECONDS : 0),
    ...passkeys,
  } as Config)
}

/**
 * WebAuthn works only in a secure context on a domain name (WebAuthn L3 §5.1.3, §13.4.9): an https
 * issuer, or http://localhost during development. The RP ID must be the issuer's host or a
 * registrable suffix of it (a deployment behind auth.example.com may bind passkeys to example.com).
 */
function passkeySettings(
  issuer: string,
  setting: 'on' | 'off' | undefined,
  rpIdSetting: string | undefined,
): { passkeys: boolean; passkeyRpId: string } {
  const url = new URL(issuer)
  const host = url.hostname
  const usable = url.protocol === 'https:' || host === 'localhost' || host.endsWith('.localhost')
  const isIp = /^[0-9.]+$/.test(host) || host.startsWith('[')
  const rpId = rpIdSetting ?? host
  if (setting === 'on' && (!usable || isIp))
    throw new ConfigError(
      'PASSKEYS: expected "off" with this ISSUER (passkeys need an https issuer with a host name, or http://localhost)',
    )
  if (host !== rpId && !host.endsWith(`.${rpId}`))
    throw new ConfigError(`PASSKEY_RP_ID: expected the ISSUER's host name or a suffix of it, got "${rpId}"`)
  return { passkeys: setting ? setting === 'on' : usable && !isIp, passkeyRpId: rpId }
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'number' ? 'a whole number' : `a ${issue.expected}`
    case 'too_small':
      return issue.origin === 'string'
        ? `at least ${issue.minimum} characters`
        : `a number ≥ ${issue.minimum}`
    case 'too_big':
      return issue.origin === 'string' ? `at most ${issue.maximum} characters` : `a number ≤ ${issue.maximum}`
    case 'invalid_value':
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
    default:
      return issue.message
  }
}
