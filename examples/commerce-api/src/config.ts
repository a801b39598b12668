import { z } from 'zod'
import { type AppLimits, appLimitSettings, appLimitsOf, DEFAULT_APP_LIMITS } from '../../shared/app-leash.js'
import { parseEnvironment, type ServiceConfig, serviceConfig, serviceSettings } from '../../shared/config.js'

/** Every setting the commerce API reads from the environment, with its default. */
export const commerceConfigSchema = z.object({
  ...serviceSettings('COMMERCE', {
    port: 3003,
    dataDir: './.data/commerce-api',
    publicUrlIs: 'the address e-commerce short links are served at',
  }),
  // Writes an application may make for each person in an hour, by its standing (issue 37).
  ...appLimitSettings('COMMERCE', DEFAULT_APP_LIMITS),
})

export interface CommerceConfig extends ServiceConfig {
  /** Writes an application may make for each person in an hour, by its standing (null: no limit). */
  readonly appLimits: AppLimits
}

export class CommerceConfigError extends Error {
  override name = 'CommerceConfigError'
}

const HOW_TO_GET_CREDENTIALS =
  'register the commerce API with the authorization server with its resource identifier and scopes (npm run cli -- resource-servers create --name "Commerce API" --resource http://localhost:3003/api --scope ecommerce:write --scope products:sync) and set COMMERCE_RESOURCE_SERVER_ID and COMMERCE_RESOURCE_SERVER_SECRET to its id and secret'

/** Reads the environment once; a bad value throws CommerceConfigError naming the variable (never a secret's value). */
export function loadCommerceConfig(env: Record<string, string | undefined>): Readonly<CommerceConfig> {
  const e = parseEnvironment(commerceConfigSchema, env, {
    credentialPrefix: 'COMMERCE_RESOURCE_SERVER_',
    howToGetCredentials: HOW_TO_GET_CREDENTIALS,
    makeError: (message) => new CommerceConfigError(message),
  })
  return Object.freeze({ ...serviceConfig('COMMERCE', e), appLimits: appLimitsOf('COMMERCE', e) })
}
