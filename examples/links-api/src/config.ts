import { z } from 'zod'
import {
  baseUrl,
  credentialId,
  credentialSecret,
  databaseUrl,
  logLevel,
  parseEnvironment,
  poolSize,
  port,
  resourceIdentifier,
  seconds,
  verification,
} from '../../shared/config.js'

/** Every setting the links API reads from the environment, with its default. */
export const linksConfigSchema = z.object({
  LINKS_PORT: port(3002),
  LINKS_HOST: z.string().min(1).default('127.0.0.1'),
  LINKS_PUBLIC_URL: baseUrl('the address short links are served at'),
  LINKS_DATABASE_URL: databaseUrl,
  LINKS_DATABASE_POOL_SIZE: poolSize,
  LINKS_DATA_DIR: z.string().min(1).default('./.data/links-api'),
  LINKAUTH_ISSUER: baseUrl('the authorization server'),
  LINKS_API_RESOURCE: resourceIdentifier,
  LINKS_RESOURCE_SERVER_ID: credentialId,
  LINKS_RESOURCE_SERVER_SECRET: credentialSecret,
  LINKS_VERIFICATION: verification,
  LINKS_INTROSPECTION_CACHE: seconds(5, 0),
  LINKS_MAX_FEED_STALENESS: seconds(10, 1),
  LINKS_IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(50 * 1024 * 1024),
  LINKS_IMPORT_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  LINKS_IMPORT_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
  LINKS_LOG_LEVEL: logLevel,
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
  /** Imports: bytes and rows an upload may have, rows per committed batch. */
  readonly imports: { readonly maxBytes: number; readonly maxRows: number; readonly batchSize: number }
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
  const e = parseEnvironment(linksConfigSchema, env, {
    credentialPrefix: 'LINKS_RESOURCE_SERVER_',
    howToGetCredentials: HOW_TO_GET_CREDENTIALS,
    makeError: (message) => new LinksConfigError(message),
  })
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
    imports: Object.freeze({
      maxBytes: e.LINKS_IMPORT_MAX_BYTES,
      maxRows: e.LINKS_IMPORT_MAX_ROWS,
      batchSize: e.LINKS_IMPORT_BATCH_SIZE,
    }),
    logLevel: e.LINKS_LOG_LEVEL,
  })
}
