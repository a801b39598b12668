import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { systemClock } from '../../src/lib/clock.js'
import { createLogger } from '../../src/logger.js'
import { keyEncryptionKeyStore, resolveSecrets } from '../../src/runtime-secrets.js'
import { createServices } from '../../src/services.js'
import {
  decryptPrivateKey,
  encryptPrivateKey,
  KeyEncryptionKeyMissingError,
  keyEncryptionKeyId,
  parseKeyEncryptionKey,
} from '../../src/tokens/key-encryption.js'
import { generateSigningKey } from '../../src/tokens/key-material.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/database.js'
import { createParty, exchangeCode } from '../helpers/fixtures.js'
import { killStartedServers, startServer } from '../helpers/server-process.js'

/**
 * Changing KEY_ENCRYPTION_KEY while the service serves: KEY_ENCRYPTION_KEY_PREVIOUS opens the old
 * rows, POST /admin/keys/rekey re-encrypts each under the new key, and a start with a key that
 * opens no stored signing key stops with one clear line. No key in clear, in the database or a log.
 */

const A = '1a'.repeat(32)
const B = '2b'.repeat(32)
const C = '3c'.repeat(32)
const idOf = (text: string) => keyEncryptionKeyId(parseKeyEncryptionKey(text))

const folders: string[] = []
afterAll(() => {
  killStartedServers()
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

function captureLog() {
  let text = ''
  const destination = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk)
      done()
    },
  })
  return { destination, text: () => text }
}

const rows = (database: TestDatabase) =>
  database.db.selectFrom('signing_keys').select(['kid', 'kek_id', 'private_key_encrypted']).execute()
const rekey = (t: TestApp) =>
  t.admin.inject({ method: 'POST', url: '/admin/keys/rekey', headers: adminHeaders })
const signs = async (t: TestApp) => (await exchangeCode(t, await createParty(t))).access_token

describe('changing the key-encryption key', () => {
  it('A → B with PREVIOUS=A while serving, then B alone: every key opens, none in clear', async () => {
    const database = await createTestDatabase()
    const log = captureLog()
    try {
      const a = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: A } })
      await a.services.signingKeys.rotate()
      await a.services.signingKeys.rotate()
      expect((await rows(database)).map((r) => r.kek_id)).toEqual([idOf(A), idOf(A), idOf(A)])

      // An instance on the new key, the old one beside it: both serve during the change.
      const ab = await buildTestApp({
        database,
        env: { KEY_ENCRYPTION_KEY: B, KEY_ENCRYPTION_KEY_PREVIOUS: A, LOG_LEVEL: 'debug' },
        logDestination: log.destination,
      })
      const [res] = await Promise.all([rekey(ab), signs(a), signs(ab), signs(a)])
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({
        kek_id: idOf(B),
        generated: false,
        rekeyed: 3,
        already_current: 0,
        unreadable: [],
        complete: true,
      })
      for (const row of await rows(database)) {
        expect(row.kek_id).toBe(idOf(B))
        expect(row.private_key_encrypted).toMatch(/^v1\.[\w-]+$/)
        expect(decryptPrivateKey(row.private_key_encrypted, parseKeyEncryptionKey(B), row.kid)).toContain(
          'BEGIN PRIVATE KEY',
        )
        expect(() =>
          decryptPrivateKey(row.private_key_encrypted, parseKeyEncryptionKey(A), row.kid),
        ).toThrow()
      }
      // One audit row per key re-encrypted, naming the key-encryption keys by id only.
      const trail = await database.db
        .selectFrom('audit_events')
        .select(['actor_kind', 'target_id', 'details'])
        .where('event_type', '=', 'signing_key.rekeyed')
        .execute()
      expect(trail.map((r) => r.target_id).sort()).toEqual((await rows(database)).map((r) => r.kid).sort())
      for (const row of trail)
        expect(row).toMatchObject({
          actor_kind: 'operator',
          details: { kek_id: idOf(B), previous_kek_id: idOf(A) },
        })
      // Idempotent: nothing left to do, and nothing more recorded.
      expect((await rekey(ab)).json()).toMatchObject({ rekeyed: 0, already_current: 3, complete: true })
      expect(
        await database.db
          .selectFrom('audit_events')
          .select('id')
          .where('event_type', '=', 'signing_key.rekeyed')
          .execute(),
      ).toHaveLength(3)
      // A key made meanwhile is under the new key.
      const made = await ab.services.signingKeys.rotate()
      expect(made.kekId).toBe(idOf(B))
      await Promise.all([a.close(), ab.close()])

      const b = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: B } })
      try {
        expect(await signs(b)).toMatch(/^ey/)
      } finally {
        await b.close()
      }
      const text = log.text()
      expect(text).toContain('signing keys re-encrypted')
      for (const secret of [A, B, 'PRIVATE KEY']) expect(text).not.toContain(secret)
    } finally {
      await database.close()
    }
  })

  it('rows from before kek_id was recorded are found by trying the current key, then the previous', async () => {
    const database = await createTestDatabase()
    try {
      const a = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: A } })
      await a.services.signingKeys.rotate()
      await a.close()
      await database.db.updateTable('signing_keys').set({ kek_id: null }).execute()
      const ab = await buildTestApp({
        database,
        env: { KEY_ENCRYPTION_KEY: B, KEY_ENCRYPTION_KEY_PREVIOUS: A },
      })
      try {
        expect(await signs(ab)).toMatch(/^ey/)
        expect((await rekey(ab)).json()).toMatchObject({ rekeyed: 2, complete: true })
        expect((await rows(database)).map((r) => r.kek_id)).toEqual([idOf(B), idOf(B)])
      } finally {
        await ab.close()
      }
    } finally {
      await database.close()
    }
  })

  it('a key under neither key is reported, the others re-encrypted; the answer says it is not complete', async () => {
    const database = await createTestDatabase()
    try {
      const ab = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: A } })
      const lost = generateSigningKey('ES256')
      await database.db
        .insertInto('signing_keys')
        .values({
          kid: lost.kid,
          alg: 'ES256',
          public_jwk: JSON.stringify(lost.publicJwk),
          private_key_encrypted: encryptPrivateKey(lost.privateKeyPem, parseKeyEncryptionKey(C), lost.kid),
          kek_id: idOf(C),
          created_at: new Date('2026-01-01T00:00:00Z'),
          retired_at: new Date('2026-01-02T00:00:00Z'),
        })
        .execute()
      await ab.close()
      const b = await buildTestApp({
        database,
        env: { KEY_ENCRYPTION_KEY: B, KEY_ENCRYPTION_KEY_PREVIOUS: A },
      })
      try {
        const res = await rekey(b)
        expect(res.json()).toMatchObject({ rekeyed: 1, unreadable: [lost.kid], complete: false })
      } finally {
        await b.close()
      }
    } finally {
      await database.close()
    }
  })
})

describe('a start with a key-encryption key that opens no stored signing key', () => {
  it('is refused with the kid and what to set, not a stack trace', async () => {
    const database = await createTestDatabase()
    try {
      const a = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: A } })
      const kid = a.services.signingKeys.activeSigningKey().kid
      await a.close()
      const started = buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: B } })
      await expect(started).rejects.toBeInstanceOf(KeyEncryptionKeyMissingError)
      const message = await started.catch((err: Error) => err.message)
      expect(message).toContain(kid)
      expect(message).toContain(idOf(A))
      expect(message).toContain('KEY_ENCRYPTION_KEY_PREVIOUS')
      for (const secret of [A, B]) expect(message).not.toContain(secret)

      if (testEngine() !== 'postgres' || !database.url) return
      const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-rekey-'))
      folders.push(dataDir)
      const server = startServer({
        DATABASE_URL: database.url,
        KEY_ENCRYPTION_KEY: B,
        DATA_DIR: dataDir,
        PORT: '0',
        ADMIN_PORT: '0',
      })
      expect(await server.exited).toBe(78)
      const output = server.output()
      expect(output).toMatch(
        /^linkauth: configuration error: signing key \S+ is encrypted under the key-encryption key with id /m,
      )
      expect(output).not.toMatch(/^\s+at /m)
      expect(output).not.toContain(B)
    } finally {
      await database.close()
    }
  }, 60_000)
})

describe('embedded mode: the key-encryption key in DATA_DIR', () => {
  async function start(dataDir: string, database: TestDatabase) {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
    const secrets = resolveSecrets(config)
    const services = createServices({
      config: Object.freeze({ ...config, ...secrets }),
      db: database.db,
      clock: systemClock,
      logger: createLogger('silent'),
      keyEncryptionKeyStore: keyEncryptionKeyStore(config),
    })
    await services.signingKeys.start()
    return services
  }

  it('keys rekey makes the new key itself; a stop half way is finished by the next run', async () => {
    const database = await createTestDatabase()
    const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-kek-'))
    folders.push(dataDir)
    const file = join(dataDir, 'key-encryption-key')
    const previousFile = join(dataDir, 'key-encryption-key.previous')
    try {
      let services = await start(dataDir, database)
      await services.signingKeys.rotate()
      const first = readFileSync(file, 'utf8').trim()

      const result = await services.signingKeys.rekey()
      const second = readFileSync(file, 'utf8').trim()
      expect(second).not.toBe(first)
      expect(result).toMatchObject({ generated: true, rekeyed: 2, kekId: idOf(second), unreadable: [] })
      expect(existsSync(previousFile)).toBe(false)
      expect((await rows(database)).map((r) => r.kek_id)).toEqual([idOf(second), idOf(second)])
      await services.signingKeys.stop()

      // Restarted: the file's key opens every key.
      services = await start(dataDir, database)
      expect(services.signingKeys.activeSigningKey().kid).toMatch(/^[\w-]{43}$/)
      await services.signingKeys.stop()

      // Stopped after the new key was written, before any row was re-encrypted: both files are there,
      // the start opens the rows with the previous key, and the next rekey finishes without a new key.
      keyEncryptionKeyStore(loadConfig({ DATA_DIR: dataDir }))!.replace(second)
      const third = readFileSync(file, 'utf8').trim()
      expect(readFileSync(previousFile, 'utf8').trim()).toBe(second)
      services = await start(dataDir, database)
      const finished = await services.signingKeys.rekey()
      expect(finished).toMatchObject({ generated: false, rekeyed: 2, kekId: idOf(third) })
      expect(existsSync(previousFile)).toBe(false)
      await services.signingKeys.stop()
    } finally {
      await database.close()
    }
  })
})
