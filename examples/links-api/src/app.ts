import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { type AppLimits, createAppLeash, DEFAULT_APP_LIMITS } from '../../shared/app-leash.js'
import type { Kysely } from 'kysely'
import { linkauthResource, protectedEndpoint, type ResourceVerifier } from '@linkauth/resource'
import type { LinksDatabase } from './db/database.js'
import { importRoutes } from './imports/import.routes.js'
import {
  createImportService,
  DEFAULT_IMPORT_SETTINGS,
  type ImportServiceDeps,
  type ImportSettings,
} from './imports/import.service.js'
import { MCP_OFF } from './config.js'
import { linksOpenApiDocument, openApiRoute } from './openapi.js'
import { linkInputSchemas } from './links/link-input.js'
import { linkRoutes } from './links/link.routes.js'
import { linkTools } from './mcp/link-tools.js'
import { mcpRoutes } from './mcp/mcp.routes.js'
import { mcpSessions } from './mcp/mcp-session.js'
import { createLinkService } from './links/link.service.js'
import { redirectRoutes } from './links/redirect.routes.js'
import { errorHandling } from './web/error-handler.js'
import { healthRoutes } from './web/health.routes.js'

export interface LinksAppDeps {
  /** appLimits: new links an application may make for each person an hour (default DEFAULT_APP_LIMITS). */
  config: { publicUrl: string; imports?: Partial<ImportSettings>; appLimits?: AppLimits }
  db: Kysely<LinksDatabase>
  verifier: ResourceVerifier
  /**
   * The MCP endpoint (/mcp), when the operator registered it: the verifier of its own resource
   * identifier, the secret its session ids are signed with (the same on every instance), and the
   * browser origins besides the API's own that may call it.
   */
  mcp?: { verifier: ResourceVerifier; sessionSecret: string; allowedOrigins?: readonly string[] }
  clock?: { now(): Date }
  logger?: FastifyBaseLogger
  /** Tests: a hook inside each import batch's transaction (a throw aborts the batch, as a crash would). */
  beforeImportBatchCommit?: ImportServiceDeps['beforeBatchCommit']
}

/** The links API: JSON under /api (every route with its scopes), short URLs at /:slug, health. */
export async function buildLinksApp(deps: LinksAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: 16 * 1024,
    // Long enough for an import upload (LINKS_IMPORT_MAX_BYTES, staged as it arrives); headers
    // still have to arrive within Node's headersTimeout (60 s).
    requestTimeout: 300_000,
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
    // DPoP proofs (RFC 9449) name the URL the client called: the API's public URL.
    publicUrl: deps.config.publicUrl,
  })
  const clock = deps.clock ?? { now: () => new Date() }
  const leash = createAppLeash({
    db: deps.db,
    clock,
    limits: deps.config.appLimits ?? DEFAULT_APP_LIMITS,
    what: 'new links',
  })
  const links = createLinkService({ db: deps.db, clock, leash })
  const schemas = linkInputSchemas(deps.config.publicUrl)
  await app.register(linkRoutes(links, schemas, deps.config.publicUrl))
  if (deps.mcp)
    await app.register(
      mcpRoutes({
        endpoint: protectedEndpoint({
          verifier: deps.mcp.verifier,
          realm: 'links-mcp',
          resourceName: 'Short links (MCP)',
          scopesSupported: ['links:read', 'links:write'],
          publicUrl: deps.config.publicUrl,
        }),
        tools: linkTools(links, schemas, deps.config.publicUrl),
        sessions: mcpSessions(deps.mcp.sessionSecret),
        allowedOrigins: [new URL(deps.config.publicUrl).origin, ...(deps.mcp.allowedOrigins ?? [])],
      }),
    )
  // Off: an agent (or a person) told where /mcp is gets JSON saying why, not a short link's 404 page.
  else
    app.all('/mcp', async (_request, reply) =>
      reply
        .code(404)
        .header('cache-control', 'no-store')
        .send({ error: 'not_found', error_description: MCP_OFF }),
    )
  const imports = createImportService({
    db: deps.db,
    clock,
    leash,
    publicUrl: deps.config.publicUrl,
    settings: { ...DEFAULT_IMPORT_SETTINGS, ...deps.config.imports },
    logger: app.log,
    ...(deps.beforeImportBatchCommit ? { beforeBatchCommit: deps.beforeImportBatchCommit } : {}),
  })
  await app.register(importRoutes(imports))
  app.decorate('importRunner', imports.runner)
  // Jobs left waiting (or by an instance that died) are taken up once the app is ready.
  app.addHook('onReady', async () => imports.runner.start())
  app.addHook('onClose', async () => imports.runner.stop())
  await app.register(openApiRoute(linksOpenApiDocument(deps.config.publicUrl, { mcp: !!deps.mcp })))
  await app.register(redirectRoutes(links))
  await app.register(healthRoutes(deps.db, deps.verifier))
  return app
}
