import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createResourceVerifier } from '@linkauth/resource'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { TEST_ADMIN_TOKEN } from '../helpers/app.js'
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/database.js'
import { exchange, obtainCode, postForm, registerParty } from '../helpers/http-flow.js'
import { freePort } from '../helpers/net.js'
import {
  type PgBouncer,
  pgbouncerPath,
  pgbouncerVersion,
  startPgBouncer,
  tracksPreparedStatements,
} from '../helpers/pgbouncer.js'
import { refusal, waitFor } from '../helpers/resource.js'
import { basicAuth } from '../helpers/tokens.js'
import {
  killStartedServers,
  startServer,
  waitForHealth,
  type ServerProcess,
} from '../helpers/server-process.js'
import { runWholeFlow } from '../helpers/whole-flow.js'

/**
 * The server through PgBouncer (Debian's package) in transaction pooling mode, as docs/operating.md
 * sets it up: statements through the transaction pool with DATABASE_PREPARED_STATEMENTS=false (before
 * PgBouncer 1.21), the LISTEN connection through a session-mode alias (DATABASE_LISTEN_URL).
 */

const onPostgres = testEngine() === 'postgres'
const bouncerPath = onPostgres ? pgbouncerPath() : undefined
const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-pgbouncer-server-'))
let database: TestDatabase
let bouncer: PgBouncer
let dbName: string

beforeAll(async () => {
  if (!bouncerPath) return
  database = await createTestDatabase()
  dbName = new URL(database.url!).pathname.slice(1)
  bouncer = await startPgBouncer(bouncerPath, {
    serverUrl: database.url!,
    // One server connection for the statements of every client: any two transactions of the pool
    // meet on it, as they would under load.
    poolSize: 1,
    databases: [`${dbName}_listen = host=127.0.0.1 port=5432 dbname=${dbName} pool_mode=session`],
  })
})

afterAll(async () => {
  killStartedServers()
  await bouncer?.stop()
  await database?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Two pool connections, one after the other, each running the same statement. */
async function sameStatementOnTwoConnections(preparedStatements: boolean): Promise<unknown> {
  const handle = await connectDatabase({
    databaseUrl: bouncer.url(database.url!),
    poolSize: 2,
    preparedStatements,
  })
  try {
    const query = sql<{ n: number }>`select count(*)::int as n from signing_keys where kid <> ${'x'}`
    await handle.db.connection().execute(async (first) => {
      await query.execute(first)
      await handle.db.connection().execute((second) => query.execute(second))
    })
    return 'ok'
  } catch (err) {
    return err instanceof Error ? err.message : err
  } finally {
    await handle.close()
  }
}

describe.skipIf(!onPostgres)('through PgBouncer in transaction pooling mode', () => {
  describe.skipIf(!bouncerPath)(`PgBouncer`, () => {
    it('named prepared statements work only where PgBouncer tracks them (1.21+); unnamed ones always', async () => {
      const version = pgbouncerVersion(bouncerPath!)
      console.log(`PgBouncer ${version.join('.')}`)
      expect(await sameStatementOnTwoConnections(false)).toBe('ok')
      const named = await sameStatementOnTwoConnections(true)
      if (tracksPreparedStatements(version)) expect(named).toBe('ok')
      else expect(named).toMatch(/prepared statement "k[\w-]+" already exists/)
    })

    describe('the server', () => {
      let running: ServerProcess
      let base: string
      let adminBase: string

      beforeAll(async () => {
        const [port, adminPort] = [await freePort(), await freePort()]
        base = `http://127.0.0.1:${port}`
        adminBase = `http://127.0.0.1:${adminPort}`
        running = startServer({
          DATABASE_URL: bouncer.url(database.url!),
          DATABASE_LISTEN_URL: bouncer.url(database.url!, `${dbName}_listen`),
          DATABASE_PREPARED_STATEMENTS: 'false',
          DATABASE_POOL_SIZE: '4',
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          COOKIE_SECRET: 'pgbouncer-cookie-secret-0123456789abcdefghij',
          KEY_ENCRYPTION_KEY: '5'.repeat(64),
          HOST: '127.0.0.1',
          PORT: String(port),
          ADMIN_PORT: String(adminPort),
          ISSUER: base,
          DATA_DIR: dataDir,
          LOG_LEVEL: 'warn',
        })
        await waitForHealth(`${base}/readyz`, running)
      }, 60_000)

      it('runs the whole flow, and requests at once on every pool connection, with no error', async () => {
        await runWholeFlow(base, adminBase, TEST_ADMIN_TOKEN)
        // Concurrent requests use all the pool's connections, whose transactions meet on PgBouncer's
        // one server connection: named prepared statements would collide there ("already exists").
        const party = await registerParty(adminBase)
        const tokens = await exchange(base, party, await obtainCode([base], party))
        const auth = basicAuth(party.rs.id, party.rs.secret)
        const answers = await Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            i % 3 === 0
              ? fetch(`${base}/.well-known/jwks.json`).then((r) => ({
                  status: r.status,
                  json: {} as Record<string, unknown>,
                }))
              : postForm(base, '/api/oauth/introspect', { token: tokens.json.access_token as string }, auth),
          ),
        )
        expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200))
        expect(answers.filter((a) => a.json.active === true)).toHaveLength(16)
        expect(running.output()).not.toMatch(/"level":(50|60)/)
        // The statements went through PgBouncer's transaction pool, the LISTEN through its session pool.
        const pools = await bouncer.show('POOLS')
        expect(pools.find((p) => p.database === dbName)).toBeDefined()
        const listenPool = pools.find((p) => p.database === `${dbName}_listen`)
        expect(listenPool?.pool_mode).toBe('session')
        expect(Number(listenPool?.sv_active)).toBeGreaterThanOrEqual(1)
        const stats = await bouncer.show('STATS')
        expect(Number(stats.find((s) => s.database === dbName)?.total_xact_count)).toBeGreaterThan(50)
      })

      it('a revocation reaches a verifier on the revocation feed within a second', async () => {
        const party = await registerParty(adminBase)
        const verifier = await createResourceVerifier({
          issuer: base,
          resource: `${base}/api`,
          credentials: party.rs,
          maxFeedStalenessSeconds: 5,
          introspectionCacheSeconds: 0,
        })
        try {
          await waitFor(() => verifier.status().mode === 'local' && verifier.status().feedConnected, {
            what: 'the feed connected',
          })
          const tokens = await exchange(base, party, await obtainCode([base], party))
          const access = tokens.json.access_token as string
          await expect(verifier.verify(access)).resolves.toMatchObject({ client_id: party.clientId })
          const revoked = await postForm(base, '/api/oauth/revoke', {
            token: access,
            client_id: party.clientId,
          })
          expect(revoked.status).toBe(200)
          const revokedAt = performance.now()
          expect(await refusal(verifier, access)).toBe('token_revoked')
          expect(performance.now() - revokedAt).toBeLessThan(1_000)
          expect(verifier.stats().introspectionCalls).toBe(0)
        } finally {
          await verifier.close()
        }
      })
    })
  })
})
