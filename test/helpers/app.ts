import type { FastifyInstance } from 'fastify'
import type { DestinationStream } from 'pino'
import { buildAdminApp } from '../../src/admin-app.js'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { type Clock, systemClock } from '../../src/lib/clock.js'
import { createLogger } from '../../src/logger.js'
import { createServices, type Services } from '../../src/services.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { freePort } from './net.js'

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdefghijklmnop'

export interface TestApp {
  app: FastifyInstance
  admin: FastifyInstance
  database: TestDatabase
  services: Services
  config: Readonly<Config>
  clock: Clock
  close(): Promise<void>
}

export interface TestAppOptions {
  clock?: Clock
  env?: Record<string, string>
  database?: TestDatabase
  /** Where the log lines go (by default stdout, at TEST_LOG_LEVEL or silent). */
  logDestination?: DestinationStream
  /** How the host names of client_id URLs resolve (DNS by default). */
  resolveHost?: (hostname: string) => Promise<string[]>
}

/**
 * A test app serving real HTTP: the public listener on a free port of 127.0.0.1 that is also its
 * ISSUER (discovery and strict clients check that the two agree), and the admin listener too when
 * asked. The caller closes it with t.close().
 */
export async function listenTestApp(
  options: TestAppOptions = {},
  listeners: { admin?: boolean } = {},
): Promise<{ t: TestApp; issuer: string; adminUrl: string | undefined }> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const t = await buildTestApp({ ...options, env: { ISSUER: issuer, ...options.env } })
  await t.app.listen({ port, host: '127.0.0.1' })
  const adminUrl = listeners.admin ? await t.admin.listen({ port: 0, host: '127.0.0.1' }) : undefined
  return { t, issuer, adminUrl }
}

/** Both listeners over a fresh database of their own, ready for app.inject or listen(). */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase())
  const config = loadConfig({
    NODE_ENV: 'test',
    ISSUER: 'http://localhost:3000',
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    COOKIE_SECRET: 'test-cookie-secret-0123456789abcdefghijklmnop',
    KEY_ENCRYPTION_KEY: '0'.repeat(64),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  })
  const clock = options.clock ?? systemClock
  const deps = {
    config,
    db: database.db,
    clock,
    logger: createLogger(config.logLevel, options.logDestination),
    poolStats: database.poolStats,
    listen: database.listen,
    resolveHost: options.resolveHost,
  }
  const services = createServices(deps)
  const app = await buildApp({ ...deps, services })
  const admin = await buildAdminApp({ ...deps, services, adminToken: TEST_ADMIN_TOKEN })
  return {
    app,
    admin,
    database,
    services,
    config,
    clock,
    close: async () => {
      await Promise.all([app.close(), admin.close()])
      if (!options.database) await database.close()
    },
  }
}

/**
 * For test files that drive far more requests from one address (127.0.0.1) than a person would:
 * every per-minute limit raised, the limits still registered. Production defaults are exercised in
 * test/rate-limit/, which never uses this.
 */
export const GENEROUS_LIMITS: Readonly<Record<string, string>> = {
  SIGN_IN_RATE_LIMIT: '100000',
  SIGN_IN_ACCOUNT_LIMIT: '100000',
  SIGN_IN_FREE_FAILURES: '100000',
  AUTHORIZE_RATE_LIMIT: '100000',
  TOKEN_RATE_LIMIT: '100000',
  REVOCATION_RATE_LIMIT: '100000',
  INTROSPECTION_RATE_LIMIT: '100000',
  UNIDENTIFIED_RATE_LIMIT: '100000',
}

export const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
