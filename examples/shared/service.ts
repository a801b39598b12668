import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import type { FastifyInstance } from 'fastify'
import { type Logger, pino } from 'pino'
import type { ServiceConfig } from './config.js'
import type { SchemaDatabaseHandle } from './db.js'
import type { Tracing } from '../../src/tracing/start.js'

/** The authorization server may start after us (one compose file, one demo): wait up to a minute. */
export async function verifierWhenReachable(
  create: () => Promise<ResourceVerifier>,
  logger: Logger,
  issuer: string,
): Promise<ResourceVerifier> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create()
    } catch (err) {
      const unreachable = err instanceof TypeError && /fetch failed/.test(err.message)
      if (!unreachable || attempt >= 30) throw err
      if (attempt === 1)
        logger.warn({ issuer }, 'authorization server not reachable yet; retrying for a minute')
      await new Promise((resolve) => setTimeout(resolve, 2_000))
    }
  }
}

/**
 * A verifier of `resource` with the API's verification settings (waiting for the authorization
 * server): the API's own, or that of another endpoint it serves with its own registration (the
 * links API's MCP endpoint).
 */
export function serviceVerifier(
  config: ServiceConfig,
  logger: Logger,
  target: { resource: string; credentials: { id: string; secret: string } } = {
    resource: config.resource,
    credentials: config.resourceServer,
  },
): Promise<ResourceVerifier> {
  return verifierWhenReachable(
    () =>
      createResourceVerifier({
        issuer: config.issuer,
        resource: target.resource,
        credentials: target.credentials,
        mode: config.verification,
        introspectionCacheSeconds: config.introspectionCacheSeconds,
        maxFeedStalenessSeconds: config.maxFeedStalenessSeconds,
        logger,
      }),
    logger,
    config.issuer,
  )
}

/** What an example API is made of: runService (below) runs it. */
export interface Service<C extends ServiceConfig, DB> {
  /** `links-api`: the log's `service` and the prefix of messages. */
  name: string
  /** `links API`: for log lines. */
  title: string
  loadConfig(env: NodeJS.ProcessEnv): C
  isConfigError(err: unknown): boolean
  connect(config: C): Promise<SchemaDatabaseHandle<DB>>
  migrate(root: SchemaDatabaseHandle<DB>['root']): Promise<string[]>
  build(deps: {
    config: C
    db: SchemaDatabaseHandle<DB>['db']
    verifier: ResourceVerifier
    logger: Logger
  }): Promise<FastifyInstance>
}

/** A service's parts, its types inferred from them. */
export function defineService<C extends ServiceConfig, DB>(service: Service<C, DB>): Service<C, DB> {
  return service
}

/**
 * The process of an example API (`npm run links-api`, `npm run commerce-api`): the only place that
 * reads the environment and listens. Loads the configuration (exit 78 on a bad one), connects and
 * migrates the database, verifies tokens with @linkauth/resource (waiting for the authorization
 * server), builds the app, listens, and stops cleanly on SIGTERM/SIGINT (flushing `tracing`'s spans).
 */
export async function runService<C extends ServiceConfig, DB>(
  service: Service<C, DB>,
  tracing?: Tracing,
): Promise<void> {
  let config: C
  try {
    config = service.loadConfig(process.env)
  } catch (err) {
    if (!service.isConfigError(err)) throw err
    process.stderr.write(`${service.name}: configuration error: ${(err as Error).message}\n`)
    process.exit(78) // EX_CONFIG
  }
  const logger = pino({
    level: config.logLevel,
    base: { service: service.name },
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[Redacted]' },
  })

  const database = await service.connect(config)
  let verifier: ResourceVerifier
  try {
    const applied = await service.migrate(database.root)
    logger.info({ engine: config.databaseUrl ? 'postgres' : 'pglite', applied }, 'database ready')
    verifier = await serviceVerifier(config, logger)
  } catch (err) {
    logger.fatal({ err, issuer: config.issuer }, 'cannot start: database or authorization server unavailable')
    await database.close()
    process.exit(1)
  }

  const app = await service.build({ config, db: database.db, verifier, logger })
  await app.listen({ port: config.port, host: config.host })
  logger.info(
    {
      publicUrl: config.publicUrl,
      issuer: config.issuer,
      resource: config.resource,
      verification: config.verification,
    },
    `${service.title} started`,
  )

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping')
    setTimeout(() => process.exit(1), 10_000).unref()
    await app.close()
    await verifier.close()
    await database.close()
    await tracing?.shutdown()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
