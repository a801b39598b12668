import { runService } from '../../shared/service.js'
import { buildCommerceApp } from './app.js'
import { CommerceConfigError, loadCommerceConfig } from './config.js'
import { connectCommerceDatabase, migrateCommerceDatabase } from './db/connect.js'

/** `npm run commerce-api`: the only place that reads the environment and listens. */
await runService({
  name: 'commerce-api',
  title: 'commerce API',
  loadConfig: loadCommerceConfig,
  isConfigError: (err) => err instanceof CommerceConfigError,
  connect: (config) =>
    connectCommerceDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolSize: config.databasePoolSize,
    }),
  migrate: migrateCommerceDatabase,
  build: buildCommerceApp,
})
