import { z } from 'zod'
import { parseEnvironment, type ServiceConfig, serviceConfig, serviceSettings } from '../../shared/config.js'

/** Every setting the links API reads from the environment, with its default. */
export const linksConfigSchema = z.object({
  ...serviceSettings('LINKS', {
    port: 3002,
    dataDir: './.data/links-api',
    publicUrlIs: 'the address short links are served at',
  }),
  LINKS_IMPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(50 * 1024 * 1024),
  LINKS_IMPORT_MAX_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  LINKS_IMPORT_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
})

export interface LinksConfig extends ServiceConfig {
  /** Imports: bytes and rows an upload may have, rows per committed batch. */
  readonly imports: { readonly maxBytes: number; readonly maxRows: number; readonly batchSize: number }
}

export class LinksConfigError extends Error {
  override name = 'LinksConfigError'
}

const HOW_TO_GET_CREDENTIALS =
  'register the links API with the authorization server with its resource identifier and scopes (npm run cli -- resource-servers create --name "Links API" --resource http://localhost:3002/api --scope links:read --scope links:write) and set LINKS_RESOURCE_SERVER_ID and LINKS_RESOURCE_SERVER_SECRET to its id and secret'

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
  return Object.freeze({
    ...serviceConfig('LINKS', e),
    imports: Object.freeze({
      maxBytes: e.LINKS_IMPORT_MAX_BYTES,
      maxRows: e.LINKS_IMPORT_MAX_ROWS,
      batchSize: e.LINKS_IMPORT_BATCH_SIZE,
    }),
  })
}
