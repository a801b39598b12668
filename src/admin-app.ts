import type { FastifyInstance } from 'fastify'
import { auditAdminRoutes } from './audit/audit.routes.js'
import { passkeyAdminRoutes } from './accounts/passkey-admin.routes.js'
import { userAdminRoutes } from './accounts/user.routes.js'
import { blockedClientAdminRoutes } from './clients/blocked-client.routes.js'
import { clientAdminRoutes } from './clients/client.routes.js'
import { healthRoutes } from './health/health.routes.js'
import { housekeepingAdminRoutes } from './housekeeping/housekeeping.routes.js'
import { createHttpServer } from './http-server.js'
import { metricsRoute, recordHttpMetrics } from './metrics/metrics.routes.js'
import { adminOpenApiDocument } from './openapi/document.js'
import { openApiRoutes } from './openapi/openapi.routes.js'
import { resourceServerAdminRoutes } from './resource-servers/resource-server.routes.js'
import { type AppDeps, createServices, type Services } from './services.js'
import { signingKeyAdminRoutes } from './tokens/key.routes.js'
import { requireAdminToken } from './web/admin-auth.js'
import { answerErrorsAs, routeGroup } from './web/error-style.js'

export interface AdminAppOptions extends AppDeps {
  adminToken: string
  services?: Services
}

/** The admin listener: operator API behind a bearer token, on its own (loopback) port. */
export async function buildAdminApp(options: AdminAppOptions): Promise<FastifyInstance> {
  const services = options.services ?? createServices(options)
  const app = await createHttpServer(options)
  recordHttpMetrics(app, services.metrics, 'admin')
  // An address nothing serves (outside /admin) keeps the listener's default: a page.
  await app.register(routeGroup('problem', [healthRoutes(services)]))
  await app.register(async (admin) => {
    answerErrorsAs(admin, 'problem', { unservedPaths: ['/admin'] })
    requireAdminToken(admin, options.adminToken, services.audit, {
      store: services.rateLimitStore.store,
      metrics: services.metrics,
      config: options.config,
    })
    await admin.register(clientAdminRoutes(services))
    await admin.register(blockedClientAdminRoutes(services))
    await admin.register(userAdminRoutes(services))
    await admin.register(passkeyAdminRoutes(services))
    await admin.register(resourceServerAdminRoutes(services))
    await admin.register(metricsRoute(services.metricsSource))
    await admin.register(signingKeyAdminRoutes(services))
    await admin.register(housekeepingAdminRoutes(services))
    await admin.register(auditAdminRoutes(services))
    // Behind the token like the rest: it describes the operator API to the operator alone.
    await admin.register(openApiRoutes(adminOpenApiDocument()))
  })
  return app
}
