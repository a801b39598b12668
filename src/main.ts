import cluster from 'node:cluster'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import { buildAdminApp } from './admin-app.js'
import { buildApp } from './app.js'
import { runPrimary, workerCount } from './cluster.js'
import { ConfigError, loadConfig } from './config.js'
import { connectDatabase, type DatabaseHandle } from './db/connect.js'
import { migrateToLatest } from './db/migrator.js'
import { systemClock } from './lib/clock.js'
import { createLogger } from './logger.js'
import { clusterMetricsSource, serveClusterMetrics } from './metrics/cluster-metrics.js'
import { adminTokenPath, resolveSecrets } from './runtime-secrets.js'
import { createServices } from './services.js'

/**
 * What a newcomer does next, logged while no application is registered: watch the whole flow with
 * the demo, or register an application and a user with the CLI (which finds the admin token itself).
 */
function firstRunHint(config: ReturnType<typeof loadConfig>): string {
  const token = config.adminToken ? 'ADMIN_TOKEN' : adminTokenPath(config.dataDir)
  return [
    'no application is registered yet. Next step:',
    `watch the whole flow with 'npm run demo' in another terminal;`,
    `or register your own with 'npm run cli -- clients create --name "My App" --redirect-uri http://127.0.0.1:8080/callback'`,
    `and 'npm run cli -- users create --email you@example.com --password <password>'`,
    `(the CLI uses the admin token in ${token}; see README "See the whole flow")`,
  ].join(' ')
}

/** The only place that reads the environment and listens. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  let secrets: ReturnType<typeof resolveSecrets>
  try {
    config = loadConfig(process.env)
    secrets = resolveSecrets(config)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`linkauth: configuration error: ${err.message}\n`)
      process.exit(78) // EX_CONFIG
    }
    throw err
  }
  const fullConfig = Object.freeze({ ...config, ...secrets })
  const logger = createLogger(config.logLevel)

  let database: DatabaseHandle
  try {
    database = await connectDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: join(config.dataDir, 'pglite'),
      poolSize: config.databasePoolSize,
    })
    if (cluster.isPrimary) {
      const { applied } = await migrateToLatest(database.db)
      logger.info({ engine: database.engine, applied }, 'database ready')
    }
  } catch (err) {
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
    ...(cluster.isWorker
      ? { metricsSource: (m: { registry: Registry }) => clusterMetricsSource(m.registry) }
      : {}),
  }
  const services = createServices(deps)
  const publicApp = await buildApp({ ...deps, services })
  const adminApp = await buildAdminApp({ ...deps, services, adminToken: secrets.adminToken })
  await publicApp.listen({ port: config.port, host: config.host })
  await adminApp.listen({ port: config.adminPort, host: config.adminHost })
  if (!config.adminToken) logger.info({ path: adminTokenPath(config.dataDir) }, 'admin token file')
  logger.info({ issuer: config.issuer }, 'linkauth started')
  if ((await services.clients.listClients()).length === 0) logger.info(firstRunHint(config))

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
    logger.info('stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
