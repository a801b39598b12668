import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { linkauthResource, type ResourceVerifier } from '@linkauth/resource'
import { errorHandling } from '../../shared/error-handler.js'
import { healthRoutes } from '../../shared/health.routes.js'
import { type AppLimits, createAppLeash, DEFAULT_APP_LIMITS, leashWrites } from '../../shared/app-leash.js'
import { conversionRoutes } from './conversions/conversion.routes.js'
import { createConversionService } from './conversions/conversion.service.js'
import type { CommerceDatabase } from './db/database.js'
import { linkInputSchemas } from './links/link-input.js'
import { linkRoutes, redirectRoutes } from './links/link.routes.js'
import { createLinkService } from './links/link.service.js'
import { commerceOpenApiDocument } from './openapi.js'
import { productInputSchemas } from './products/product-input.js'
import { productRoutes } from './products/product.routes.js'
import { createProductService } from './products/product.service.js'

export interface CommerceAppDeps {
  /** appLimits: writes an application may make for each person an hour (default DEFAULT_APP_LIMITS). */
  config: { publicUrl: string; appLimits?: AppLimits }
  db: Kysely<CommerceDatabase>
  verifier: ResourceVerifier
  clock?: { now(): Date }
  logger?: FastifyBaseLogger
}

/** Every request body but a product batch (products/product.routes.ts) fits in 16 KiB. */
export const BODY_LIMIT = 16 * 1024

/**
 * The commerce API: JSON under /api (every route with its scope: products:sync or ecommerce:write),
 * e-commerce short URLs at /:slug, its OpenAPI document, health. Errors are RFC 9457 problems.
 */
export async function buildCommerceApp(deps: CommerceAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: BODY_LIMIT,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    routerOptions: { maxParamLength: 600 },
  })
  await errorHandling(app, 'problem')
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff')
  })
  // Serves the RFC 9728 metadata too; scopes_supported are the scopes the routes below declare.
  await app.register(linkauthResource, {
    verifier: deps.verifier,
    realm: 'commerce-api',
    resourceName: 'Commerce API',
  })
  const clock = deps.clock ?? { now: () => new Date() }
  // What an application may write for each person in an hour, by its standing (issue 37).
  leashWrites(
    app,
    createAppLeash({
      db: deps.db,
      clock,
      limits: deps.config.appLimits ?? DEFAULT_APP_LIMITS,
      what: 'writes',
    }),
  )
  const { publicUrl } = deps.config
  const products = createProductService({ db: deps.db, clock })
  const links = createLinkService({ db: deps.db, clock })
  await app.register(productRoutes(products, productInputSchemas(publicUrl)))
  await app.register(linkRoutes(links, linkInputSchemas(publicUrl), publicUrl))
  await app.register(conversionRoutes(createConversionService({ db: deps.db, clock })))
  const document = commerceOpenApiDocument({
    publicUrl,
    resource: deps.verifier.resource,
    issuer: deps.verifier.issuer,
  })
  app.get('/openapi.json', async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(document),
  )
  await app.register(redirectRoutes(links))
  await app.register(healthRoutes(deps.db, deps.verifier))
  return app
}
