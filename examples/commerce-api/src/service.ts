import { defineService } from '../../shared/service.js'
import { buildCommerceApp } from './app.js'
import { CommerceConfigError, loadCommerceConfig } from './config.js'
import { connectCommerceDatabase, migrateCommerceDatabase } from './db/connect.js'

/** The commerce API's process (main.ts runs it, after tracing when asked). */
export const service = defineService({
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
