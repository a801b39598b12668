import { z } from 'zod'

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

const booleanish = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

/** Every setting linkauth reads from the environment, with its default. */
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: port(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
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
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
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
  METRICS_TOKEN: secret(32),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  COOKIE_SECRET: secret(32),
  KEY_ENCRYPTION_KEY: keyEncryptionKey,
  AUTH_CODE_TTL: seconds(60),
  ACCESS_TOKEN_TTL: seconds(600),
  REFRESH_TOKEN_TTL: seconds(30 * 24 * 3600),
  REFRESH_TOKEN_ABSOLUTE_TTL: seconds(180 * 24 * 3600),
  SESSION_TTL: seconds(12 * 3600),
  ACCESS_TOKEN_AUDIENCE: optionalString.pipe(z.string().min(1).optional()),
  SIGNING_ALG: z.enum(['ES256', 'EdDSA', 'RS256']).default('ES256'),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// URL')
      .optional(),
  ),
  TRUST_PROXY: booleanish,
  // Below the server's 60 s socket inactivity timeout, which would cut a held poll.
  EVENTS_MAX_WAIT_SECONDS: z.coerce.number().int().min(1).max(50).default(25),
  EVENT_STREAM_IDLE_SECONDS: seconds(600),
})

type Env = z.output<typeof configSchema>

export interface Config {
  readonly env: Env['NODE_ENV']
  readonly port: number
  readonly host: string
  readonly issuer: string
  readonly databaseUrl: string | undefined
  readonly databasePoolSize: number
  /** Server processes (node:cluster); 'auto' is one per core. Needs DATABASE_URL when above 1. */
  readonly workers: number | 'auto'
  readonly dataDir: string
  readonly adminPort: number
  readonly adminHost: string
  readonly adminToken: string | undefined
  readonly logLevel: Env['LOG_LEVEL']
  /** Bearer token for GET /metrics on the public listener; without it the route does not exist there. */
  readonly metricsToken: string | undefined
  readonly cookieSecret: string | undefined
  readonly keyEncryptionKey: string | undefined
  readonly authCodeTtl: number
  readonly accessTokenTtl: number
  readonly refreshTokenTtl: number
  readonly refreshTokenAbsoluteTtl: number
  readonly sessionTtl: number
  readonly accessTokenAudience: string
  readonly signingAlg: Env['SIGNING_ALG']
  readonly redisUrl: string | undefined
  readonly trustProxy: boolean
  /** How long a revocation-feed poll is held open when there is nothing to deliver. */
  readonly eventsMaxWaitSeconds: number
  /** A revocation-feed stream not polled for this long is deleted. */
  readonly eventStreamIdleSeconds: number
}

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
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    issuer,
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    workers: e.WORKERS,
    dataDir: e.DATA_DIR,
    adminPort: e.ADMIN_PORT,
    adminHost: e.ADMIN_HOST,
    adminToken: e.ADMIN_TOKEN,
    logLevel: e.LOG_LEVEL,
    metricsToken: e.METRICS_TOKEN,
    cookieSecret: e.COOKIE_SECRET,
    keyEncryptionKey: e.KEY_ENCRYPTION_KEY,
    authCodeTtl: e.AUTH_CODE_TTL,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    refreshTokenTtl: e.REFRESH_TOKEN_TTL,
    refreshTokenAbsoluteTtl: e.REFRESH_TOKEN_ABSOLUTE_TTL,
    sessionTtl: e.SESSION_TTL,
    accessTokenAudience: e.ACCESS_TOKEN_AUDIENCE ?? `${issuer}/api`,
    signingAlg: e.SIGNING_ALG,
    redisUrl: e.REDIS_URL,
    trustProxy: e.TRUST_PROXY,
    eventsMaxWaitSeconds: e.EVENTS_MAX_WAIT_SECONDS,
    eventStreamIdleSeconds: e.EVENT_STREAM_IDLE_SECONDS,
  })
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
