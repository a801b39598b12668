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

/** Every setting the commerce API reads from the environment, with its default. */
export const commerceConfigSchema = z.object({
  COMMERCE_PORT: port(3003),
  COMMERCE_HOST: z.string().min(1).default('127.0.0.1'),
  COMMERCE_PUBLIC_URL: baseUrl('the address e-commerce short links are served at'),
  COMMERCE_DATABASE_URL: databaseUrl,
  COMMERCE_DATABASE_POOL_SIZE: poolSize,
  COMMERCE_DATA_DIR: z.string().min(1).default('./.data/commerce-api'),
  LINKAUTH_ISSUER: baseUrl('the authorization server'),
  COMMERCE_API_RESOURCE: resourceIdentifier,
  COMMERCE_RESOURCE_SERVER_ID: credentialId,
  COMMERCE_RESOURCE_SERVER_SECRET: credentialSecret,
  COMMERCE_VERIFICATION: verification,
  COMMERCE_INTROSPECTION_CACHE: seconds(5, 0),
  COMMERCE_MAX_FEED_STALENESS: seconds(10, 1),
  COMMERCE_LOG_LEVEL: logLevel,
})

export interface CommerceConfig {
  readonly port: number
  readonly host: string
  /** Where e-commerce short links are served: `<publicUrl>/<slug>`. */
  readonly publicUrl: string
  readonly databaseUrl: string | undefined
  readonly databasePoolSize: number
  /** PGlite's files when there is no databaseUrl. */
  readonly dataDir: string
  readonly issuer: string
  /** The commerce API's resource identifier (RFC 8707): the only `aud` it accepts. */
  readonly resource: string
  readonly resourceServer: { readonly id: string; readonly secret: string }
  readonly verification: 'local' | 'introspection'
  readonly introspectionCacheSeconds: number
  readonly maxFeedStalenessSeconds: number
  readonly logLevel: z.output<typeof commerceConfigSchema>['COMMERCE_LOG_LEVEL']
}

export class CommerceConfigError extends Error {
  override name = 'CommerceConfigError'
}

const HOW_TO_GET_CREDENTIALS =
  'register the commerce API with the authorization server (POST /admin/resource-servers with its name, resource and scopes ecommerce:write products:sync) and set COMMERCE_RESOURCE_SERVER_ID and COMMERCE_RESOURCE_SERVER_SECRET to its id and secret'

/** Reads the environment once; a bad value throws CommerceConfigError naming the variable (never a secret's value). */
export function loadCommerceConfig(env: Record<string, string | undefined>): Readonly<CommerceConfig> {
  const e = parseEnvironment(commerceConfigSchema, env, {
    credentialPrefix: 'COMMERCE_RESOURCE_SERVER_',
    howToGetCredentials: HOW_TO_GET_CREDENTIALS,
    makeError: (message) => new CommerceConfigError(message),
  })
  const publicUrl = e.COMMERCE_PUBLIC_URL ?? `http://localhost:${e.COMMERCE_PORT}`
  return Object.freeze({
    port: e.COMMERCE_PORT,
    host: e.COMMERCE_HOST,
    publicUrl,
    databaseUrl: e.COMMERCE_DATABASE_URL,
    databasePoolSize: e.COMMERCE_DATABASE_POOL_SIZE,
    dataDir: e.COMMERCE_DATA_DIR,
    issuer: e.LINKAUTH_ISSUER ?? 'http://localhost:3000',
    // Its JSON routes live under /api; the short URLs beside them need no token.
    resource: e.COMMERCE_API_RESOURCE ?? `${publicUrl}/api`,
    resourceServer: Object.freeze({
      id: e.COMMERCE_RESOURCE_SERVER_ID,
      secret: e.COMMERCE_RESOURCE_SERVER_SECRET,
    }),
    verification: e.COMMERCE_VERIFICATION,
    introspectionCacheSeconds: e.COMMERCE_INTROSPECTION_CACHE,
    maxFeedStalenessSeconds: e.COMMERCE_MAX_FEED_STALENESS,
    logLevel: e.COMMERCE_LOG_LEVEL,
  })
}
