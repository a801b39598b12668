import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { checkBrowser, NO_BROWSER_REASON } from './chromium.js'
import { makePGliteSnapshots } from './pglite-snapshots.js'
import { createTemplateDatabase, dropDatabase } from './postgres-admin.js'
import { checkRedis } from './redis.js'

declare module 'vitest' {
  export interface ProvidedContext {
    testDatabase:
      | { engine: 'postgres'; adminUrl: string; template: string }
      | { engine: 'pglite'; why: string; snapshotDir: string }
    /** A DATA_DIR with a migrated embedded database, for seededDataDir() to copy. */
    dataDirTemplate: string
  }
}

type TestDatabaseChoice = ReturnType<TestProject['getProvidedContext']>['testDatabase']
interface Prepared {
  testDatabase: TestDatabaseChoice
  dataDirTemplate: string
  teardown: () => Promise<void>
}
/** The one preparation of a run, kept where every project's call of setup() finds it. */
const shared = globalThis as typeof globalThis & {
  linkauthTestRun?: { prepared: Promise<Prepared>; projects: number }
}

/**
 * Vitest calls a global setup once per project (vitest.config.ts has two, one sharing worker processes
 * between files, one giving each file its own, and the root): the database, the snapshots and the skip
 * lines are made once for all of them, and undone when the last project's teardown runs.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = (shared.linkauthTestRun ??= { prepared: prepare(), projects: 0 })
  run.projects++
  const { testDatabase, dataDirTemplate, teardown } = await run.prepared
  project.provide('testDatabase', testDatabase)
  project.provide('dataDirTemplate', dataDirTemplate)
  return async () => {
    if (--run.projects > 0) return
    delete shared.linkauthTestRun
    await teardown()
  }
}

/**
 * Picks the database under test once (DESIGN §6): TEST_DATABASE_URL → real PostgreSQL; else a
 * testcontainers PostgreSQL where a Docker engine answers; else embedded PGlite. A migrated database
 * is made once (a template database on PostgreSQL, a saved data directory on PGlite), and each test
 * file gets a fresh copy of it.
 */
async function prepare(): Promise<Prepared> {
  // Where the first test that needs it makes the DATA_DIR template (seededDataDir): most runs of a
  // few files never need it, and none should wait for it at the start.
  const dataDirTemplate = mkdtempSync(join(tmpdir(), 'linkauth-data-dir-'))
  const removeTemplate = () => rmSync(dataDirTemplate, { recursive: true, force: true })
  // Once per run: the browser tests are skipped with this one line, or fail the run under REQUIRE_BROWSER=1.
  if (!checkBrowser()) console.log(NO_BROWSER_REASON)
  // Likewise the Redis tests: one line when nothing answers at TEST_REDIS_URL (or a failure under REQUIRE_REDIS=1).
  await checkRedis({ announce: true })
  const forced = process.env.LINKAUTH_TEST_ENGINE
  let adminUrl = forced === 'pglite' ? undefined : process.env.TEST_DATABASE_URL || undefined
  let stopContainer: (() => Promise<unknown>) | undefined
  if (!adminUrl && forced !== 'pglite' && dockerSocketPresent()) {
    try {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
      const container = await new PostgreSqlContainer('postgres:17-alpine').start()
      adminUrl = container.getConnectionUri()
      stopContainer = () => container.stop()
    } catch (err) {
      console.warn(`testcontainers: no PostgreSQL container (${(err as Error).message}); using PGlite`)
    }
  }
  if (!adminUrl) {
    // Once per run, like the browser line: the PostgreSQL-only tests skip, and this says why.
    console.log(noPostgresReason(forced === 'pglite'))
    const snapshotDir = mkdtempSync(join(tmpdir(), 'linkauth-pglite-'))
    await makePGliteSnapshots(snapshotDir)
    return {
      testDatabase: { engine: 'pglite', why: forced === 'pglite' ? 'forced' : 'no PostgreSQL', snapshotDir },
      dataDirTemplate,
      teardown: async () => {
        rmSync(snapshotDir, { recursive: true, force: true })
        removeTemplate()
      },
    }
  }
  const url = adminUrl
  const template = await createTemplateDatabase(url)
  return {
    testDatabase: { engine: 'postgres', adminUrl: url, template },
    dataDirTemplate,
    teardown: async () => {
      removeTemplate()
      await dropDatabase(url, template)
      await stopContainer?.()
    },
  }
}

/**
 * The files with tests that need a PostgreSQL server, not the embedded engine: several processes
 * or pools on one database, LISTEN/NOTIFY between them, connections killed under load, the pool's
 * metrics, query plans, a lock held by another session. test/ci/skip-reasons.test.ts checks this
 * list against the tests' own skip conditions, and README's Tests section against it.
 */
export const POSTGRES_ONLY_FILES = [
  'test/accounts/passkey-last-way.test.ts',
  'test/events/long-poll.test.ts',
  'test/faults/database-faults.test.ts',
  'test/housekeeping/housekeeping.test.ts',
  'test/housekeeping/index-use.test.ts',
  'test/instances/backup-restore.test.ts',
  'test/instances/pgbouncer.test.ts',
  'test/instances/several-instances.test.ts',
  'test/instances/upgrade.test.ts',
  'test/metrics/metrics.test.ts',
  'test/process/server-process.test.ts',
  'test/process/start-refusals.test.ts',
  'test/repositories/storage-housekeeping.test.ts',
  'test/revocation/deadlock.test.ts',
] as const

export function noPostgresReason(forced: boolean): string {
  const why = forced
    ? 'LINKAUTH_TEST_ENGINE=pglite'
    : 'no TEST_DATABASE_URL, and no Docker engine for testcontainers'
  return `PostgreSQL-only tests skipped: the suite runs on embedded PGlite (${why}); set TEST_DATABASE_URL=postgres://… to run them too (they are in ${POSTGRES_ONLY_FILES.join(', ')})`
}

function dockerSocketPresent(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock')
}
