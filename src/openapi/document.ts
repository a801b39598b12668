import { auditAdminOperations } from '../audit/audit.openapi.js'
import { connectedAppsApiOperations } from '../accounts/connected-apps.openapi.js'
import { passkeyAdminOperations, passkeyPageOperations } from '../accounts/passkey.openapi.js'
import { userAdminOperations } from '../accounts/user.openapi.js'
import { blockedClientAdminOperations, clientAdminOperations } from '../clients/client.openapi.js'
import { registrationOperations } from '../clients/registration.openapi.js'
import type { Config } from '../config.js'
import { eventFeedOperations } from '../events/event-feed.openapi.js'
import { healthOperations } from '../health/health.openapi.js'
import { housekeepingAdminOperations } from '../housekeeping/housekeeping.openapi.js'
import { adminMetricsOperations } from '../metrics/metrics.openapi.js'
import { authorizeOperations } from '../oauth/authorize.openapi.js'
import { introspectOperations } from '../oauth/introspect.openapi.js'
import { metadataOperations } from '../oauth/metadata.openapi.js'
import { parOperations } from '../oauth/par.openapi.js'
import { revokeOperations } from '../oauth/revoke.openapi.js'
import { deviceAuthorizationOperations } from '../oauth/device-authorization.openapi.js'
import { tokenOperations } from '../oauth/token.openapi.js'
import { resourceServerAdminOperations } from '../resource-servers/resource-server.openapi.js'
import { jwksOperations } from '../tokens/jwks.openapi.js'
import { signingKeyAdminOperations } from '../tokens/key.openapi.js'
import { adminAuthLimited, noAdminToken, type Operations } from './describe.js'
import { openApiOperations } from './openapi.routes.js'

/**
 * The OpenAPI 3.1 documents of the two listeners, assembled from the operations each route group
 * describes beside its routes (`*.openapi.ts`). A group registered on a listener (app.ts,
 * admin-app.ts) has its operations here; test/openapi/ checks both ways, and real answers too.
 */

/**
 * The public listener: OAuth endpoints, discovery, the account area's JSON API, health. A fresh
 * tree each call (the groups' operation objects are module-level and shared): whoever edits the
 * document they were handed cannot change the one another app serves.
 */
export function publicOpenApiDocument(config: Pick<Config, 'issuer'>) {
  return structuredClone({
    openapi: '3.1.0',
    info: {
      title: 'linkauth public API',
      version: '1',
      description:
        'OAuth 2.0 authorization server (Authorization Code + PKCE S256, public clients). ' +
        'The OAuth interface is unversioned and changes only by addition; see docs/integrating.md.',
    },
    servers: [{ url: config.issuer }],
    components: {
      securitySchemes: {
        resourceServer: {
          type: 'http',
          scheme: 'basic',
          description: 'The id and secret of a resource server registered by the operator.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'linkauth_session',
          description:
            'The sign-in session cookie; named `__Host-linkauth_session` when the issuer is https.',
        },
      },
    },
    paths: {
      ...authorizeOperations,
      ...tokenOperations,
      ...parOperations,
      ...revokeOperations,
      ...deviceAuthorizationOperations,
      ...registrationOperations,
      ...introspectOperations,
      ...eventFeedOperations,
      ...metadataOperations,
      ...jwksOperations,
      ...connectedAppsApiOperations,
      ...passkeyPageOperations,
      ...healthOperations,
      ...openApiOperations('public'),
    },
  })
}

/** The admin listener: the operator's API, every route behind the admin token except health. A fresh tree each call. */
export function adminOpenApiDocument() {
  return structuredClone({
    openapi: '3.1.0',
    info: {
      title: 'linkauth admin API',
      version: '1',
      description:
        'The operator API on the admin listener (ADMIN_HOST:ADMIN_PORT); the linkauth CLI uses it.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN.' } },
    },
    security: [{ adminToken: [] }],
    paths: withAdminAuthLimit({
      ...clientAdminOperations,
      ...blockedClientAdminOperations,
      ...userAdminOperations,
      ...passkeyAdminOperations,
      ...resourceServerAdminOperations,
      ...signingKeyAdminOperations,
      ...housekeepingAdminOperations,
      ...auditAdminOperations,
      ...adminMetricsOperations,
      ...healthOperations,
      ...openApiOperations('admin'),
    }),
  })
}

/** Every operation behind the admin token also answers 429 once its address spent its failures. */
function withAdminAuthLimit(paths: Operations): Operations {
  const limited = (operation: object) =>
    'responses' in operation && (operation.responses as Record<string, unknown>)['401'] === noAdminToken
      ? { ...operation, responses: { ...(operation.responses as object), '429': adminAuthLimited } }
      : operation
  return Object.fromEntries(
    Object.entries(paths).map(([path, methods]) => [
      path,
      Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, limited(op)])),
    ]),
  )
}
