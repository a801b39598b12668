import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyInstance } from 'fastify'
import { connectedAppsRoutes } from './accounts/connected-apps.routes.js'
import { signInRoutes } from './accounts/sign-in.routes.js'
import { passwordRoutes } from './accounts/password.routes.js'
import { passkeySignInRoutes } from './accounts/passkey-sign-in.routes.js'
import { passkeyRoutes } from './accounts/passkey.routes.js'
import { healthRoutes } from './health/health.routes.js'
import { eventFeedRoutes } from './events/event-feed.routes.js'
import { createHttpServer } from './http-server.js'
import { metricsRoute, recordHttpMetrics } from './metrics/metrics.routes.js'
import { registrationRoutes } from './clients/registration.routes.js'
import { authorizeRoutes } from './oauth/authorize.routes.js'
import { introspectRoutes } from './oauth/introspect.routes.js'
import { revokeRoutes } from './oauth/revoke.routes.js'
import { metadataRoutes } from './oauth/metadata.routes.js'
import { parRoutes } from './oauth/par.routes.js'
import { publicOpenApiDocument } from './openapi/document.js'
import { openApiRoutes } from './openapi/openapi.routes.js'
import { tokenRoutes } from './oauth/token.routes.js'
import { deviceAuthorizationRoutes } from './oauth/device-authorization.routes.js'
import { devicePageRoutes } from './oauth/device-page.routes.js'
import { rateLimits } from './rate-limit/rate-limits.js'
import { identifyResourceServer } from './resource-servers/resource-server-auth.js'
import { parseParameters } from './input/parameters.js'
import { type AppDeps, createServices, type Services } from './services.js'
import { jwksRoutes } from './tokens/jwks.routes.js'
import { routeGroup } from './web/error-style.js'
import { staticRoutes } from './web/static.routes.js'
import { languageRoutes } from './web/i18n/language.routes.js'

export interface PublicAppOptions extends AppDeps {
  /** Reuse services already wired (main.ts shares them with the admin listener). */
  services?: Services
}

/** The public listener: OAuth endpoints, pages, discovery, health. */
export async function buildApp(options: PublicAppOptions): Promise<FastifyInstance> {
  const services = options.services ?? createServices(options)
  // Signing keys are loaded (or made) before the first request; the key poll stops with the app.
  await services.signingKeys.start()
  await services.events.start()
  await services.rateLimitStore.start()
  await services.housekeeping.start()
  const app = await createHttpServer(options)
  app.addHook('onClose', async () => {
    await services.signingKeys.stop()
    await services.housekeeping.stop()
    await services.rateLimitStore.stop()
  })
  // Before the server waits for in-flight requests: held polls answer now instead of at max wait.
  app.addHook('preClose', async () => services.events.stop())
  await app.register(formbody, { bodyLimit: options.config.bodyLimit, parser: parseParameters })
  await app.register(cookie, options.config.cookieSecret ? { secret: options.config.cookieSecret } : {})
  // The pages' language when nothing else chooses one (language.routes.ts, uiOf).
  app.decorate('defaultLocale', options.config.defaultLocale)
  recordHttpMetrics(app, services.metrics, 'public')
  // Before the routes: its onRoute hook attaches each limit to its route.
  await app.register(
    rateLimits(
      {
        store: services.rateLimitStore.store,
        metrics: services.metrics,
        resourceServerOf: (authorization) =>
          identifyResourceServer(authorization, services.resourceServers).then(
            (server) => server.id,
            () => undefined,
          ),
      },
      options.config,
    ),
  )
  const accountApps = connectedAppsRoutes(services, options.config)
  const passkeySignIn = passkeySignInRoutes(services, options.config)
  const accountPasskeys = passkeyRoutes(services, options.config)
  // Pages for people answer errors with a page, as does any address no group below owns.
  await app.register(
    routeGroup('html', [
      staticRoutes,
      languageRoutes(options.config),
      signInRoutes(services, options.config),
      authorizeRoutes(services, options.config),
      devicePageRoutes(services, options.config),
      accountApps.pages,
      passwordRoutes(services, options.config),
      passkeySignIn.pages,
      accountPasskeys.pages,
    ]),
  )
  // OAuth clients and resource servers read RFC 6749 errors, below these paths too: the revocation
  // feed takes introspection's credentials, so it answers like introspection.
  await app.register(
    routeGroup(
      'oauth',
      [
        tokenRoutes(services, options.config),
        parRoutes(services, options.config),
        deviceAuthorizationRoutes(services, options.config),
        revokeRoutes(services, options.config),
        introspectRoutes(services),
        eventFeedRoutes(services, options.config),
        registrationRoutes(services, options.config.issuer),
      ],
      { unservedPaths: ['/api/oauth', '/api/events'] },
    ),
  )
  // JSON APIs, discovery and health: problem details. The admin API has its own listener; a
  // request for it sent here still gets the kind of answer its client reads.
  await app.register(
    routeGroup(
      'problem',
      [
        healthRoutes(services),
        ...(options.config.metricsToken
          ? [metricsRoute(services.metricsSource, options.config.metricsToken)]
          : []),
        accountApps.api,
        passkeySignIn.api,
        accountPasskeys.api,
        jwksRoutes(services),
        metadataRoutes(options.config, services.resourceServers),
        openApiRoutes(publicOpenApiDocument(options.config)),
      ],
      { unservedPaths: ['/api', '/.well-known', '/admin'] },
    ),
  )
  return app
}
