import { z } from 'zod'
import {
  credentialId,
  credentialSecret,
  optional,
  parseEnvironment,
  resourceIdentifier,
  type ServiceConfig,
  serviceConfig,
  serviceSettings,
} from '../../shared/config.js'
import { type AppLimits, appLimitSettings, appLimitsOf, DEFAULT_APP_LIMITS } from '../../shared/app-leash.js'

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
  // New links an application may create for each person in an hour, by its standing (issue 37).
  ...appLimitSettings('LINKS', DEFAULT_APP_LIMITS),
  // The MCP endpoint (/mcp) is its own registered resource; without its credentials it is not served.
  LINKS_MCP_RESOURCE: resourceIdentifier,
  LINKS_MCP_RESOURCE_SERVER_ID: credentialId.optional(),
  LINKS_MCP_RESOURCE_SERVER_SECRET: credentialSecret.optional(),
  LINKS_MCP_ALLOWED_ORIGINS: optional.pipe(
    z
      .string()
      .transform((v) => v.split(',').map((o) => o.trim()))
      .pipe(z.array(z.url({ protocol: /^https?$/, error: 'a comma-separated list of http(s) origins' })))
      .optional(),
  ),
})

export interface LinksConfig extends ServiceConfig {
  /** Imports: bytes and rows an upload may have, rows per committed batch. */
  readonly imports: { readonly maxBytes: number; readonly maxRows: number; readonly batchSize: number }
  /** New links an application may create for each person in an hour, by its standing (null: no limit). */
  readonly appLimits: AppLimits
  /**
   * The MCP endpoint: its resource identifier (its canonical URL), its resource-server credentials,
   * and browser origins besides the API's own allowed to call it. Undefined: /mcp is not served.
   */
  readonly mcp:
    | {
        readonly resource: string
        readonly resourceServer: { readonly id: string; readonly secret: string }
        readonly allowedOrigins: readonly string[]
      }
    | undefined
}

export class LinksConfigError extends Error {
  override name = 'LinksConfigError'
}

const HOW_TO_GET_CREDENTIALS =
  'register the links API with the authorization server with its resource identifier and scopes (npm run cli -- resource-servers create --name "Links API" --resource http://localhost:3002/api --scope links:read --scope links:write) and set LINKS_RESOURCE_SERVER_ID and LINKS_RESOURCE_SERVER_SECRET to its id and secret'

/** How the operator registers the MCP endpoint with linkauth (said at start and by /mcp when it is off). */
export const MCP_REGISTRATION =
  'register it: npm run cli -- resource-servers create --name "Links for AI agents" --resource $LINKS_PUBLIC_URL/mcp --scope links:read --scope links:write'

/** What /mcp answers while it is off. */
export const MCP_OFF = `The MCP endpoint is off on this server: set LINKS_MCP_RESOURCE_SERVER_ID and LINKS_MCP_RESOURCE_SERVER_SECRET and restart (${MCP_REGISTRATION}; npm run links-api:demo does it all).`

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
  const base = serviceConfig('LINKS', e)
  const mcpId = e.LINKS_MCP_RESOURCE_SERVER_ID
  const mcpSecret = e.LINKS_MCP_RESOURCE_SERVER_SECRET
  if ((mcpId === undefined) !== (mcpSecret === undefined))
    throw new LinksConfigError(
      `${mcpId === undefined ? 'LINKS_MCP_RESOURCE_SERVER_ID' : 'LINKS_MCP_RESOURCE_SERVER_SECRET'} is not set: set both to serve /mcp (${MCP_REGISTRATION}), or neither`,
    )
  return Object.freeze({
    ...base,
    mcp:
      mcpId !== undefined && mcpSecret !== undefined
        ? Object.freeze({
            resource: e.LINKS_MCP_RESOURCE ?? `${base.publicUrl}/mcp`,
            resourceServer: Object.freeze({ id: mcpId, secret: mcpSecret }),
            allowedOrigins: Object.freeze(e.LINKS_MCP_ALLOWED_ORIGINS ?? []),
          })
        : undefined,
    appLimits: appLimitsOf('LINKS', e),
    imports: Object.freeze({
      maxBytes: e.LINKS_IMPORT_MAX_BYTES,
      maxRows: e.LINKS_IMPORT_MAX_ROWS,
      batchSize: e.LINKS_IMPORT_BATCH_SIZE,
    }),
  })
}
