import { runService } from '../../shared/service.js'
import { buildLinksApp } from './app.js'
import { LinksConfigError, loadLinksConfig } from './config.js'
import { connectLinksDatabase } from './db/connect.js'
import { migrateLinksDatabase } from './db/migrator.js'

/** `npm run links-api`: the only place that reads the environment and listens. */
await runService({
  name: 'links-api',
  title: 'links API',
  loadConfig: loadLinksConfig,
  isConfigError: (err) => err instanceof LinksConfigError,
  connect: (config) =>
    connectLinksDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
    }),
  migrate: migrateLinksDatabase,
  build: buildLinksApp,
})
