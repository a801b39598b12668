import { isResourceIdentifier } from '@linkauth/resource'
import { z } from 'zod'

const optional = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v))
const baseUrl = (what: string) =>
  optional.pipe(
    z
      .url({ protocol: /^https?$/, error: `an http(s) URL (${what})` })
      .refine((v) => !v.includes('?') && !v.includes('#'), 'an http(s) URL without query or fragment')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  )
const seconds = (fallback: number, min: number) =>
  z.coerce.number().int().min(min).max(3600).default(fallback)

/** Every setting the links API reads from the environment, with its default. */
export const linksConfigSchema = z.object({
  LINKS_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  LINKS_HOST: z.string().min(1).default('127.0.0.1'),
  LINKS_PUBLIC_URL: baseUrl('the address short links are served at'),
  LINKS_DATABASE_URL: optional.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'a postgres:// connection URL')
      .optional(),
  ),
  LINKS_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  LINKS_DATA_DIR: z.string().min(1).default('./.data/links-api'),
  LINKAUTH_ISSUER: baseUrl('the authorization server'),
  LINKS_API_RESOURCE: optional.pipe(
    z
      .string()
      .refine(
        isResourceIdentifier,
        'an absolute https URI (http on a loopback host) without fragment, at most 2048 characters',
      )
      .optional(),
  ),
  LINKS_RESOURCE_SERVER_ID: optional.pipe(z.string().min(1).max(200)),
  LINKS_RESOURCE_SERVER_SECRET: optional.pipe(z.string().min(1).max(500)),
  LINKS_VERIFICATION: z.enum(['local', 'introspection']).default('local'),
  LINKS_INTROSPECTION_CACHE: seconds(5, 0),
  LINKS_MAX_FEED_STALENESS: seconds(10, 1),
  LINKS_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
})

export interface LinksConfig {
  readonly port: number
  readonly host: string
  /** Where short links are served: `<publicUrl>/<slug>`. */
  readonly publicUrl: string
  readonly databaseUrl: string | undefined
  readonly databasePoolSize: number
  /** PGlite's files when there is no databaseUrl. */
  readonly dataDir: string
  readonly issuer: string
  /** The links API's resource identifier (RFC 8707): the only `aud` it accepts. */
  readonly resource: string
  readonly resourceServer: { readonly id: string; readonly secret: string }
  readonly verification: 'local' | 'introspection'
  readonly introspectionCacheSeconds: number
  readonly maxFeedStalenessSeconds: number
  readonly logLevel: z.output<typeof linksConfigSchema>['LINKS_LOG_LEVEL']
}

export class LinksConfigError extends Error {
  override name = 'LinksConfigError'
}

const HOW_TO_GET_CREDENTIALS =
  'register the links API with the authorization server (npm run cli -- resource-servers create --name "Links API") and set LINKS_RESOURCE_SERVER_ID and LINKS_RESOURCE_SERVER_SECRET to its id and secret'

/** Reads the environment once; a bad value throws LinksConfigError naming the variable (never a secret's value). */
export function loadLinksConfig(env: Record<string, string | undefined>): Readonly<LinksConfig> {
  // Silently ignoring it would leave the API refusing every token of the audience it was set to.
  if (env.LINKS_AUDIENCE)
    throw new LinksConfigError(
      'LINKS_AUDIENCE is no longer read: the links API accepts tokens for its own resource identifier, LINKS_API_RESOURCE (default $LINKS_PUBLIC_URL/api), registered with the authorization server',
    )
  const result = linksConfigSchema.safeParse(env)
  if (!result.success) {
    const issue = result.error.issues[0]!
    const name = String(issue.path[0] ?? 'environment')
    const shown = name.endsWith('SECRET') ? '(hidden)' : JSON.stringify(env[name])
    if (name.startsWith('LINKS_RESOURCE_SERVER_') && !env[name])
      throw new LinksConfigError(`${name} is not set: ${HOW_TO_GET_CREDENTIALS}`)
    throw new LinksConfigError(`${name}: ${issue.message} (got ${shown})`)
  }
  const e = result.data
  const issuer = e.LINKAUTH_ISSUER ?? 'http://localhost:3000'
  const publicUrl = e.LINKS_PUBLIC_URL ?? `http://localhost:${e.LINKS_PORT}`
  return Object.freeze({
    port: e.LINKS_PORT,
    host: e.LINKS_HOST,
    publicUrl,
    databaseUrl: e.LINKS_DATABASE_URL,
    databasePoolSize: e.LINKS_DATABASE_POOL_SIZE,
    dataDir: e.LINKS_DATA_DIR,
    issuer,
    // Its JSON routes live under /api; the short URLs beside them need no token.
    resource: e.LINKS_API_RESOURCE ?? `${publicUrl}/api`,
    resourceServer: Object.freeze({ id: e.LINKS_RESOURCE_SERVER_ID, secret: e.LINKS_RESOURCE_SERVER_SECRET }),
    verification: e.LINKS_VERIFICATION,
    introspectionCacheSeconds: e.LINKS_INTROSPECTION_CACHE,
    maxFeedStalenessSeconds: e.LINKS_MAX_FEED_STALENESS,
    logLevel: e.LINKS_LOG_LEVEL,
  })
}
