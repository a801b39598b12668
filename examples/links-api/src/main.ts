import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { type Logger, pino } from 'pino'
import { buildLinksApp } from './app.js'
import { connectLinksDatabase } from './db/connect.js'
import { migrateLinksDatabase } from './db/migrator.js'
import { LinksConfigError, loadLinksConfig } from './config.js'

/** The authorization server may start after us (one compose file, one demo): wait up to a minute. */
async function verifierWhenReachable(
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

/** `npm run links-api`: the only place that reads the environment and listens. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadLinksConfig>
  try {
    config = loadLinksConfig(process.env)
  } catch (err) {
    if (!(err instanceof LinksConfigError)) throw err
    process.stderr.write(`links-api: configuration error: ${err.message}\n`)
    process.exit(78) // EX_CONFIG
  }
  const logger = pino({
    level: config.logLevel,
    base: { service: 'links-api' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[Redacted]' },
  })

  const database = await connectLinksDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  })
  let verifier: ResourceVerifier
  try {
    const applied = await migrateLinksDatabase(database.root)
    logger.info({ engine: config.databaseUrl ? 'postgres' : 'pglite', applied }, 'database ready')
    verifier = await verifierWhenReachable(
      () =>
        createResourceVerifier({
          issuer: config.issuer,
          resource: config.resource,
          credentials: config.resourceServer,
          mode: config.verification,
          introspectionCacheSeconds: config.introspectionCacheSeconds,
          maxFeedStalenessSeconds: config.maxFeedStalenessSeconds,
          logger,
        }),
      logger,
      config.issuer,
    )
  } catch (err) {
    logger.fatal({ err, issuer: config.issuer }, 'cannot start: database or authorization server unavailable')
    await database.close()
    process.exit(1)
  }

  const app = await buildLinksApp({ config, db: database.db, verifier, logger })
  await app.listen({ port: config.port, host: config.host })
  logger.info(
    {
      publicUrl: config.publicUrl,
      issuer: config.issuer,
      resource: config.resource,
      verification: config.verification,
    },
    'links API started',
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
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
