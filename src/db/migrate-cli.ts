import { join } from 'node:path'
import { ConfigError, loadConfig } from '../config.js'
import { connectDatabase } from './connect.js'
import { migrateToLatest } from './migrator.js'

/** `npm run migrate`: brings the configured database (PostgreSQL or PGlite in DATA_DIR) to the newest schema. */
try {
  const config = loadConfig(process.env)
  const database = await connectDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: join(config.dataDir, 'pglite'),
  })
  try {
    const { applied } = await migrateToLatest(database.db)
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n')
  } finally {
    await database.close()
  }
} catch (err) {
  process.stderr.write(`linkauth migrate: ${err instanceof ConfigError ? err.message : String(err)}\n`)
  process.exit(1)
}
