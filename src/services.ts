import { readFileSync } from 'node:fs'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import { createAuditService } from './audit/audit.service.js'
import { createConnectedAppsService } from './accounts/connected-apps.service.js'
import { createPasskeyResetService } from './accounts/passkey-reset.service.js'
import { createPasskeyService } from './accounts/passkey.service.js'
import { createSessionService } from './accounts/session.service.js'
import { createUserService } from './accounts/user.service.js'
import { createClientService } from './clients/client.service.js'
import { createDynamicRegistrationService } from './clients/dynamic-registration.service.js'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import type { Listen } from './db/notifications.js'
import { createEventFeedService } from './events/event-feed.service.js'
import { createGrantService } from './grants/grant.service.js'
import { createRefreshTokenService } from './grants/refresh-token.service.js'
import { createHealthService } from './health/health.service.js'
import { createHousekeepingService } from './housekeeping/housekeeping.service.js'
import type { Clock } from './lib/clock.js'
import { createMetrics, type PoolStats } from './metrics/metrics.js'
import type { MetricsSource } from './metrics/metrics.routes.js'
import { createAuthorizeService } from './oauth/authorize.service.js'
import { createDpopService } from './oauth/dpop.service.js'
import { createParService } from './oauth/par.service.js'
import { createDeviceAuthorizationService } from './oauth/device-authorization.service.js'
import { createRateLimitStore } from './rate-limit/rate-limit-store.js'
import { createSignInThrottle } from './accounts/sign-in-throttle.service.js'
import { createIntrospectionService } from './oauth/introspection.service.js'
import { createRevocationService } from './oauth/revocation.service.js'
import { createTokenAudiences } from './oauth/resource-targets.js'
import { createResourceServerService } from './resource-servers/resource-server.service.js'
import { createAccessTokenService } from './tokens/access-token.js'
import { createAccessTokenStatusService } from './tokens/access-token-status.service.js'
import { createAccessTokenVerifier } from './tokens/access-token-verifier.js'
import { createSecretSeal } from './tokens/key-encryption.js'
import { createSigningKeyService, type KeyEncryptionKeyStore } from './tokens/signing-key.service.js'

/** What both listeners are built from; passed in, never imported as singletons (DESIGN §2). */
export interface AppDeps {
  config: Readonly<Config>
  db: Kysely<Database>
  clock: Clock
  logger: Logger
  /** The database's notifications (DatabaseHandle.listen): they wake held revocation-feed polls. */
  listen?: Listen
  /** The PostgreSQL pool's figures, for the pool gauge. */
  poolStats?: () => PoolStats
  /** Process metrics (CPU, memory, event loop): on in the server, off in tests. */
  processMetrics?: boolean
  /** Where /metrics text comes from; by default this process's registry (a cluster worker asks the primary). */
  metricsSource?: (metrics: ReturnType<typeof createMetrics>) => MetricsSource
  /** Set when the key-encryption key lives in DATA_DIR (runtime-secrets.ts): `keys rekey` makes the new one. */
  keyEncryptionKeyStore?: KeyEncryptionKeyStore | undefined
  /** Tests: how the host names of client_id URLs resolve (DNS by default). */
  resolveHost?: (hostname: string) => Promise<string[]>
}

/** Wires every service once over the given dependencies. */
export function createServices(deps: AppDeps) {
  const { db, clock, config } = deps
  const metrics = createMetrics({
    poolStats: deps.poolStats,
    processMetrics: deps.processMetrics,
    // Read when scraped, after `events` below exists.
    heldPolls: () => events.waiting,
  })
  const audit = createAuditService(deps)
  const revoked = (kind: 'grant' | 'refresh_family' | 'access_token', count: number) =>
    metrics.revocations.inc({ kind }, count)
  const grants = createGrantService(
    db,
    clock,
    config,
    { codeReplayed: () => metrics.codeReplays.inc(), revoked },
    audit.recorder,
  )
  const signingKeys = createSigningKeyService({ ...deps, audit: audit.recorder })
  const refreshTokens = createRefreshTokenService(
    db,
    clock,
    config,
    {
      refreshTokenReused: () => metrics.refreshTokenReuse.inc(),
      refreshRetry: (outcome) => metrics.refreshTokenRetries.inc({ outcome }),
      revoked,
    },
    audit.recorder,
    // A successor held for the retry window is sealed under the key-encryption key.
    createSecretSeal(signingKeys.keyEncryptionRing),
  )
  const accessTokenStatus = createAccessTokenStatusService(db, clock, { revoked })
  const accessTokenVerifier = createAccessTokenVerifier(config, clock, signingKeys)
  const clients = createClientService(
    db,
    clock,
    grants,
    audit.recorder,
    {
      config,
      logger: deps.logger,
      testCa:
        config.clientMetadataTestCa === undefined
          ? undefined
          : readFileSync(config.clientMetadataTestCa, 'utf8'),
      resolve: deps.resolveHost,
    },
    // The pages' name (BRAND_NAME) is borrowed like the service's own.
    [config.brand.name, ...config.reservedClientNames],
  )
  const resourceServers = createResourceServerService(db, config, clock, grants, audit.recorder)
  const events = createEventFeedService({
    db,
    clock,
    config,
    logger: deps.logger,
    signingKeys,
    listen: deps.listen,
    delivered: (count) => metrics.securityEventsDelivered.inc(count),
  })
  const rateLimitStore = createRateLimitStore({ config, clock, logger: deps.logger, metrics })
  const signInThrottle = createSignInThrottle(rateLimitStore.store, config)
  const registrations = createDynamicRegistrationService({
    db,
    clock,
    config,
    store: rateLimitStore.store,
    grants,
    audit: audit.recorder,
    registered: () => metrics.clientRegistrations.inc({ outcome: 'registered' }),
    removed: (count) => metrics.clientRegistrations.inc({ outcome: 'removed' }, count),
    changed: clients.invalidateOrigins,
    reservedNames: clients.reservedNames,
  })
  const users = createUserService(db, clock, config, audit.recorder, grants)
  const passkeys = createPasskeyService(db, clock, config, audit.recorder, {
    signedIn: () => metrics.passkeySignIns.inc(),
    refused: (ceremony, reason) => metrics.passkeyFailures.inc({ ceremony, reason }),
  })
  return {
    metrics,
    metricsSource: deps.metricsSource?.(metrics) ?? {
      text: () => metrics.registry.metrics(),
      contentType: metrics.registry.contentType,
    },
    health: createHealthService(db),
    users,
    sessions: createSessionService(
      db,
      clock,
      config.sessionTtl,
      signInThrottle,
      { passwordChecked: () => metrics.passwordChecks.inc() },
      audit.recorder,
    ),
    passkeys,
    passkeyResets: createPasskeyResetService(db, clock, { users, passkeys, audit: audit.recorder, grants }),
    audit,
    grants,
    refreshTokens,
    accessTokenStatus,
    authorize: createAuthorizeService(db, clock, grants),
    clients,
    connectedApps: createConnectedAppsService(grants, clients, resourceServers, audit),
    resourceServers,
    tokenAudiences: createTokenAudiences(config, resourceServers),
    signingKeys,
    accessTokens: createAccessTokenService(config, clock, signingKeys),
    accessTokenVerifier,
    introspection: createIntrospectionService(config, accessTokenVerifier, accessTokenStatus, (id) =>
      clients.isAcceptedClientId(id),
    ),
    revocation: createRevocationService(accessTokenVerifier, accessTokenStatus, refreshTokens),
    events,
    rateLimitStore,
    signInThrottle,
    registrations,
    housekeeping: createHousekeepingService({
      ...deps,
      metrics,
      eventStreamIdleSince: events.idleSince,
      afterSteps: (batchSize) => registrations.removeUnused(batchSize),
    }),
    dpop: createDpopService({ ...deps, redis: rateLimitStore.redis }),
    par: createParService(db, clock, config),
    deviceAuthorizations: createDeviceAuthorizationService({
      db,
      clock,
      config,
      audit: audit.recorder,
      clients,
      resourceServers,
      store: rateLimitStore.store,
    }),
  }
}

export type Services = ReturnType<typeof createServices>
