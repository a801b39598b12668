import cluster from 'node:cluster'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import { buildAdminApp } from './admin-app.js'
import { buildApp } from './app.js'
import { runPrimary, workerCount } from './cluster.js'
import { ConfigError, loadConfig } from './config.js'
import { connectDatabase, type DatabaseHandle } from './db/connect.js'
import { auditTrailIsRewritable } from './audit/audit.service.js'
import { migrateThrough } from './db/migrator.js'
import { PGliteLockedError } from './db/pglite-lock.js'
import { systemClock } from './lib/clock.js'
import { logFirstRunHint, runningFrom } from './first-run-hint.js'
import { listenOn } from './listen.js'
import { createLogger, stdoutDestination } from './logger.js'
import { clusterMetricsSource, serveClusterMetrics } from './metrics/cluster-metrics.js'
import { adminTokenPath, keyEncryptionKeyStore, resolveSecrets } from './runtime-secrets.js'
import { createServices } from './services.js'
import { KeyEncryptionKeyMissingError } from './tokens/key-encryption.js'
import type { Tracing } from './tracing/start.js'

/** A setting that keeps the server from starting: one line naming it, and EX_CONFIG. */
export function exitOnConfigError(err: ConfigError): never {
  process.stderr.write(`linkauth: configuration error: ${err.message}\n`)
  process.exit(78) // EX_CONFIG; cluster.ts does not restart a worker that exits with it
}

/** The package root (holding package.json), from src/ under tsx or from dist/src/ once built. */
const packageRoot = join(
  dirname(fileURLToPath(import.meta.url)),
  import.meta.url.includes('/dist/') ? '../..' : '..',
)

/**
 * The server process (main.ts starts tracing first, when asked, then calls this): the only place that
 * reads the environment and listens.
 */
export async function serve(tracing: Tracing | undefined): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  let secrets: ReturnType<typeof resolveSecrets>
  try {
    config = loadConfig(process.env)
    secrets = resolveSecrets(config)
  } catch (err) {
    if (err instanceof ConfigError) exitOnConfigError(err)
    throw err
  }
  const fullConfig = Object.freeze({ ...config, ...secrets })
  const terminal = await stdoutDestination(process.stdout)
  const logger = createLogger(config.logLevel, terminal)

  let database: DatabaseHandle
  try {
    database = await connectDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: join(config.dataDir, 'pglite'),
      poolSize: config.databasePoolSize,
      listenUrl: config.databaseListenUrl,
      preparedStatements: config.databasePreparedStatements,
    })
    if (cluster.isPrimary) {
      const { applied } = await migrateThrough(database.db, config.databaseMigrationUrl)
      logger.info({ engine: database.engine, applied }, 'database ready')
      if (database.engine === 'postgres' && (await auditTrailIsRewritable(database.db)))
        logger.warn(
          'the DATABASE_URL role owns the audit trail (or may update or delete it): a stolen connection could rewrite it; serve with a role of its own (docs/operating.md, "Database roles")',
        )
    }
  } catch (err) {
    if (err instanceof PGliteLockedError) {
      process.stderr.write(
        `linkauth: DATA_DIR ${config.dataDir} is in use by another linkauth (${err.holder}, lock file ${err.lockFile}); stop that one, or set DATA_DIR to another folder${err.ifGone}\n`,
      )
      process.exit(1)
    }
    logger.fatal({ err }, 'cannot open or migrate the database')
    process.exit(1)
  }

  const workers = workerCount(config.workers)
  if (cluster.isPrimary && workers > 1 && config.rateLimits && !config.redisUrl) {
    logger.warn(
      { workers },
      'WORKERS above 1 without REDIS_URL: each process keeps its own rate-limit counts, so every limit is WORKERS times looser',
    )
  }
  if (cluster.isPrimary && workers > 1) {
    // Secrets and migrations are settled once, here; the workers serve.
    await database.close()
    serveClusterMetrics()
    runPrimary(workers, logger)
    return
  }

  const deps = {
    config: fullConfig,
    db: database.db,
    clock: systemClock,
    logger,
    poolStats: database.poolStats,
    listen: database.listen,
    processMetrics: true,
    keyEncryptionKeyStore: keyEncryptionKeyStore(config),
    ...(cluster.isWorker
      ? { metricsSource: (m: { registry: Registry }) => clusterMetricsSource(m.registry) }
      : {}),
  }
  const services = createServices(deps)
  let publicApp: FastifyInstance
  try {
    publicApp = await buildApp({ ...deps, services })
  } catch (err) {
    // A stored signing key that the configured key-encryption keys do not open: a setting to fix.
    if (!(err instanceof KeyEncryptionKeyMissingError)) throw err
    await database.close()
    exitOnConfigError(new ConfigError(err.message))
  }
  const adminApp = await buildAdminApp({ ...deps, services, adminToken: secrets.adminToken })
  try {
    await listenOn(publicApp, {
      port: config.port,
      host: config.host,
      portVariable: 'PORT',
      hostVariable: 'HOST',
    })
    await listenOn(adminApp, {
      port: config.adminPort,
      host: config.adminHost,
      portVariable: 'ADMIN_PORT',
      hostVariable: 'ADMIN_HOST',
    })
  } catch (err) {
    // Nothing may stay listening, and the PGlite lock must go, before the process says why it stops.
    await Promise.allSettled([publicApp.close(), adminApp.close()] as Promise<FastifyInstance | undefined>[])
    await database.close()
    if (err instanceof ConfigError) exitOnConfigError(err)
    throw err
  }
  if (!config.adminToken) logger.info({ path: adminTokenPath(config.dataDir) }, 'admin token file')
  logger.info({ issuer: config.issuer }, 'linkauth started')
  if (!(await services.clients.hasClients()))
    logFirstRunHint(logger, config, runningFrom(packageRoot), terminal !== undefined)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'stopping: finishing in-flight requests')
    const force = setTimeout(() => {
      logger.error('in-flight requests did not finish in 10 s; exiting')
      process.exit(1)
    }, 10_000)
    force.unref()
    await Promise.allSettled([publicApp.close(), adminApp.close()] as Promise<FastifyInstance | undefined>[])
    await database.close()
    await tracing?.shutdown()
    logger.info('stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
