import { Migrator, NO_MIGRATIONS } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { migrations } from '../../migrations/index.js'
import { connectDatabase } from '../../src/db/connect.js'
import { migrateToLatest, migrationsAreCurrent } from '../../src/db/migrator.js'
import { adminHeaders, buildTestApp } from '../helpers/app.js'
import { createTestDatabase } from '../helpers/database.js'

const cleanups: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('health endpoints', () => {
  it('answers /healthz and /readyz on both listeners, uncached', async () => {
    const t = await buildTestApp()
    cleanups.push(() => t.close())
    for (const app of [t.app, t.admin]) {
      const health = await app.inject({ method: 'GET', url: '/healthz' })
      expect(health.statusCode).toBe(200)
      expect(health.json()).toEqual({ status: 'ok' })
      expect(health.headers['cache-control']).toBe('no-store')
      const ready = await app.inject({ method: 'GET', url: '/readyz' })
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'ready' })
    }
  })

  it('does not log the probes at info, while other requests are logged', async () => {
    const lines: string[] = []
    const t = await buildTestApp({
      env: { LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => void lines.push(line) },
    })
    cleanups.push(() => t.close())
    for (const url of ['/healthz', '/readyz']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200)
      expect((await t.admin.inject({ method: 'GET', url })).statusCode).toBe(200)
    }
    expect(lines.filter((l) => /healthz|readyz/.test(l))).toEqual([])
    await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect(lines.filter((l) => l.includes('/.well-known/jwks.json')).length).toBeGreaterThan(0)
  })

  it('is not ready while migrations are pending', async () => {
    const empty = await createTestDatabase({ migrated: false })
    const t = await buildTestApp({ database: empty })
    cleanups.push(async () => {
      await t.close()
      await empty.close()
    })
    const before = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(before.statusCode).toBe(503)
    expect(before.json()).toEqual({ status: 'unavailable', reason: 'migrations_pending' })
    await migrateToLatest(empty.db)
    const after = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(after.statusCode).toBe(200)
  })

  it('answers 503 (not 500) when the database cannot be reached, and stays alive', async () => {
    const unreachable = await connectDatabase({
      databaseUrl: 'postgres://postgres@127.0.0.1:1/none',
      poolSize: 1,
    })
    const t = await buildTestApp({ database: { ...unreachable } })
    cleanups.push(async () => {
      await t.close()
      await unreachable.close()
    })
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toEqual({ status: 'unavailable', reason: 'database_unavailable' })
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    const write = await t.admin.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: adminHeaders,
      payload: { name: 'X', redirect_uris: ['https://x.example/cb'] },
    })
    expect(write.statusCode).toBe(503)
    expect(write.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(write.headers['retry-after']).toBe('5')
    expect(write.body).not.toMatch(/ECONNREFUSED|at .*\.ts/)
  })
})

describe('migrations', () => {
  it('migrate from empty, down to empty and up again; a second run applies nothing', async () => {
    const database = await createTestDatabase({ migrated: false })
    cleanups.push(() => database.close())
    expect(await migrationsAreCurrent(database.db)).toBe(false)
    expect((await migrateToLatest(database.db)).applied).toEqual(Object.keys(migrations))
    expect(await migrationsAreCurrent(database.db)).toBe(true)
    expect((await migrateToLatest(database.db)).applied).toEqual([])

    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } })
    const down = await migrator.migrateTo(NO_MIGRATIONS)
    expect(down.error).toBeUndefined()
    const tables = await database.db.introspection.getTables()
    expect(tables.map((t) => t.name).filter((n) => !n.startsWith('kysely_'))).toEqual([])

    expect((await migrateToLatest(database.db)).applied).toEqual(Object.keys(migrations))
    const names = (await database.db.introspection.getTables()).map((t) => t.name).sort()
    expect(names).toEqual(
      expect.arrayContaining([
        'authorization_codes',
        'clients',
        'grants',
        'pending_authorizations',
        'refresh_families',
        'refresh_tokens',
        'resource_servers',
        'revoked_access_tokens',
        'sign_in_sessions',
        'signing_keys',
        'users',
      ]),
    )
  })
})
