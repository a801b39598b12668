import { isResourceIdentifier } from '@linkauth/resource'
import { z } from 'zod'

/** The pieces of an example API's environment schema, each read the same way by every API. */
export const optional = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))

export const baseUrl = (what: string) =>
  optional.pipe(
    z
      .url({ protocol: /^https?$/, error: `an http(s) URL (${what})` })
      .refine((v) => !v.includes('?') && !v.includes('#'), 'an http(s) URL without query or fragment')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  )

export const seconds = (fallback: number, min: number) =>
  z.coerce.number().int().min(min).max(3600).default(fallback)

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)

export const databaseUrl = optional.pipe(
  z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
    .optional(),
)

export const poolSize = z.coerce.number().int().min(1).max(200).default(10)

export const resourceIdentifier = optional.pipe(
  z
    .string()
    .refine(
      isResourceIdentifier,
      'an absolute https URI (http on a loopback host) without fragment, at most 2048 characters',
    )
    .optional(),
)

export const credentialId = optional.pipe(z.string().min(1).max(200))
export const credentialSecret = optional.pipe(z.string().min(1).max(500))
export const verification = z.enum(['local', 'introspection']).default('local')
export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')
export type LogLevel = z.output<typeof logLevel>

/** The settings every example API has, without its prefix (`PORT` is read as `LINKS_PORT`, `COMMERCE_PORT`). */
function serviceFields(defaults: { port: number; dataDir: string; publicUrlIs: string }) {
  return {
    PORT: port(defaults.port),
    HOST: z.string().min(1).default('127.0.0.1'),
    PUBLIC_URL: baseUrl(defaults.publicUrlIs),
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: poolSize,
    DATA_DIR: z.string().min(1).default(defaults.dataDir),
    API_RESOURCE: resourceIdentifier,
    RESOURCE_SERVER_ID: credentialId,
    RESOURCE_SERVER_SECRET: credentialSecret,
    VERIFICATION: verification,
    INTROSPECTION_CACHE: seconds(5, 0),
    MAX_FEED_STALENESS: seconds(10, 1),
    LOG_LEVEL: logLevel,
  }
}
type ServiceFields = ReturnType<typeof serviceFields>
type Prefixed<P extends string, T> = { [K in keyof T & string as `${P}_${K}`]: T[K] }

/**
 * The environment schema's entries every example API shares, named with its prefix, plus
 * LINKAUTH_ISSUER: spread them into the API's `z.object` beside its own settings.
 */
export function serviceSettings<P extends string>(
  prefix: P,
  defaults: { port: number; dataDir: string; publicUrlIs: string },
): Prefixed<P, ServiceFields> & { LINKAUTH_ISSUER: ReturnType<typeof baseUrl> } {
  const fields = Object.entries(serviceFields(defaults)).map(([name, field]) => [`${prefix}_${name}`, field])
  return {
    ...(Object.fromEntries(fields) as Prefixed<P, ServiceFields>),
    LINKAUTH_ISSUER: baseUrl('the authorization server'),
  }
}

/** What every example API's process reads from its configuration. */
export interface ServiceConfig {
  readonly port: number
  readonly host: string
  /** Where its short links are served: `<publicUrl>/<slug>`. */
  readonly publicUrl: string
  readonly databaseUrl: string | undefined
  readonly databasePoolSize: number
  /** PGlite's files when there is no databaseUrl. */
  readonly dataDir: string
  readonly issuer: string
  /** The API's resource identifier (RFC 8707): the `aud` it accepts (alone, or in a list). */
  readonly resource: string
  readonly resourceServer: { readonly id: string; readonly secret: string }
  readonly verification: 'local' | 'introspection'
  readonly introspectionCacheSeconds: number
  readonly maxFeedStalenessSeconds: number
  readonly logLevel: LogLevel
}

type ServiceSettings<P extends string> = z.output<z.ZodObject<ReturnType<typeof serviceSettings<P>>>>

/** The shared part of an API's configuration, from its parsed environment (see serviceSettings). */
export function serviceConfig<P extends string>(prefix: P, parsed: ServiceSettings<P>): ServiceConfig {
  const e = parsed as unknown as Record<string, unknown>
  const get = <K extends keyof ServiceFields>(name: K) => e[`${prefix}_${name}`] as z.output<ServiceFields[K]>
  const publicUrl = get('PUBLIC_URL') ?? `http://localhost:${get('PORT')}`
  return {
    port: get('PORT'),
    host: get('HOST'),
    publicUrl,
    databaseUrl: get('DATABASE_URL'),
    databasePoolSize: get('DATABASE_POOL_SIZE'),
    dataDir: get('DATA_DIR'),
    issuer: (e.LINKAUTH_ISSUER as string | undefined) ?? 'http://localhost:3000',
    // Its JSON routes live under /api; the short URLs beside them need no token.
    resource: get('API_RESOURCE') ?? `${publicUrl}/api`,
    resourceServer: Object.freeze({ id: get('RESOURCE_SERVER_ID'), secret: get('RESOURCE_SERVER_SECRET') }),
    verification: get('VERIFICATION'),
    introspectionCacheSeconds: get('INTROSPECTION_CACHE'),
    maxFeedStalenessSeconds: get('MAX_FEED_STALENESS'),
    logLevel: get('LOG_LEVEL'),
  }
}

/**
 * Parses the environment with an API's schema. A bad value throws `makeError(message)` naming the
 * variable and the value it got (never a secret's); a missing resource-server credential says how
 * to get one.
 */
export function parseEnvironment<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined>,
  options: { credentialPrefix: string; howToGetCredentials: string; makeError: (message: string) => Error },
): z.output<S> {
  const result = schema.safeParse(env)
  if (result.success) return result.data
  const issue = result.error.issues[0]!
  const name = String(issue.path[0] ?? 'environment')
  const shown = name.endsWith('SECRET') ? '(hidden)' : JSON.stringify(env[name])
  if (name.startsWith(options.credentialPrefix) && !env[name])
    throw options.makeError(`${name} is not set: ${options.howToGetCredentials}`)
  throw options.makeError(`${name}: ${issue.message} (got ${shown})`)
}
