import { z } from 'zod'
import { accountSchema, passkeySettings } from './config/accounts.js'
import { brandSchema, brandSettings } from './config/brand.js'
import { checkClientSettings, clientSchema } from './config/clients.js'
import { databaseSchema } from './config/database.js'
import { checkEventSettings, eventSchema } from './config/events.js'
import { ConfigError } from './config/fields.js'
import { housekeepingSchema } from './config/housekeeping.js'
import { rateLimitSchema } from './config/rate-limits.js'
import { checkServerSettings, serverSchema } from './config/server.js'
import { checkTokenSettings, DEFAULT_ROTATION_SECONDS, tokenSchema } from './config/tokens.js'
import type { Brand } from './web/brand.js'

export { ConfigError, DEFAULT_ROTATION_SECONDS }

/**
 * Every setting linkauth reads from the environment, with its default: one schema composed of each
 * area's (src/config/: the server and its listeners, the database, tokens and keys, accounts, rate
 * limits, the event feed, housekeeping, self-registering clients, the pages' brand).
 */
export const configSchema = z.object({
  ...serverSchema.shape,
  ...databaseSchema.shape,
  ...tokenSchema.shape,
  ...accountSchema.shape,
  ...rateLimitSchema.shape,
  ...eventSchema.shape,
  ...housekeepingSchema.shape,
  ...clientSchema.shape,
  ...brandSchema.shape,
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
  /** The pages' name, logo, colours and links (the BRAND_* settings, checked and read at start). */
  brand: Brand
}

/**
 * Every setting, typed by the schema: a setting is added to configSchema and nowhere else. The
 * schema's variables become camelCase properties (SIGN_IN_MAX_DELAY → signInMaxDelay; see ConfigKey).
 */
export type Config = Readonly<
  Omit<{ [K in keyof Settings as ConfigKey<K>]: Settings[K] }, keyof Derived> & Derived
>

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
  checkTokenSettings(e)
  checkEventSettings(e)
  checkServerSettings(e)
  checkClientSettings(e, e.NODE_ENV)
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
    brand: brandSettings(e),
  } as Config)
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
