import { join } from 'node:path'
import { ConfigError, loadConfig } from '../config.js'
import { connectDatabase } from './connect.js'
import { migrateThrough } from './migrator.js'
import { PGliteLockedError } from './pglite-lock.js'

/** `npm run migrate`: brings the configured database (PostgreSQL or PGlite in DATA_DIR) to the newest schema. */
let dataDir = './.data'
try {
  const config = loadConfig(process.env)
  dataDir = config.dataDir
  const database = await connectDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: join(config.dataDir, 'pglite'),
    preparedStatements: config.databasePreparedStatements,
  })
  try {
    const { applied } = await migrateThrough(database.db, config.databaseMigrationUrl)
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n')
  } finally {
    await database.close()
  }
} catch (err) {
  const message =
    err instanceof ConfigError
      ? err.message
      : err instanceof PGliteLockedError
        ? `DATA_DIR ${dataDir} is in use by a running linkauth (${err.holder}), which migrates at start; stop it first${err.ifGone}`
        : String(err)
  process.stderr.write(`linkauth migrate: ${message}\n`)
  process.exit(1)
}
