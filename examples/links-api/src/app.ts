import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { linkauthResource, type ResourceVerifier } from '@linkauth/resource'
import type { LinksDatabase } from './db/database.js'
import { linkInputSchemas } from './links/link-input.js'
import { linkRoutes } from './links/link.routes.js'
import { createLinkService } from './links/link.service.js'
import { redirectRoutes } from './links/redirect.routes.js'
import { errorHandling } from './web/error-handler.js'
import { healthRoutes } from './web/health.routes.js'

export interface LinksAppDeps {
  config: { publicUrl: string }
  db: Kysely<LinksDatabase>
  verifier: ResourceVerifier
  clock?: { now(): Date }
  logger?: FastifyBaseLogger
}

/** The links API: JSON under /api (every route with its scopes), short URLs at /:slug, health. */
export async function buildLinksApp(deps: LinksAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: 16 * 1024,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    routerOptions: { maxParamLength: 200 },
  })
  await errorHandling(app)
  // JSON and short pages only: no browser may guess another type for them.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff')
  })
  // Serves the RFC 9728 metadata too; scopes_supported are the scopes the routes below declare.
  await app.register(linkauthResource, {
    verifier: deps.verifier,
    realm: 'links-api',
    resourceName: 'Links API',
  })
  const links = createLinkService({ db: deps.db, clock: deps.clock ?? { now: () => new Date() } })
  await app.register(linkRoutes(links, linkInputSchemas(deps.config.publicUrl), deps.config.publicUrl))
  await app.register(redirectRoutes(links))
  await app.register(healthRoutes(deps.db, deps.verifier))
  return app
}
