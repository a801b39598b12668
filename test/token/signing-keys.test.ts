import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createServices } from '../../src/services.js'
import { decryptPrivateKey, parseKeyEncryptionKey } from '../../src/tokens/key-encryption.js'
import { createSigningKeyService } from '../../src/tokens/signing-key.service.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import type { TestClock } from '../helpers/clock.js'
import { createTestDatabase } from '../helpers/database.js'
import { appWithParty, createParty, exchangeCode, type Party } from '../helpers/fixtures.js'

let t: TestApp
let clock: TestClock
let party: Party
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
})
afterAll(async () => t?.close())

async function jwks() {
  return (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as {
    keys: Record<string, unknown>[]
  }
}

async function verify(token: string, keySet: { keys: Record<string, unknown>[] }) {
  return jwtVerify(token, createLocalJWKSet(keySet as never), {
    typ: 'at+jwt',
    issuer: t.config.issuer,
    audience: t.config.accessTokenAudience,
    currentDate: clock.now(),
  })
}

const listKeys = async () =>
  (await t.admin.inject({ method: 'GET', url: '/admin/keys', headers: adminHeaders })).json().keys as {
    kid: string
    active: boolean
    retired_at: string | null
  }[]

describe('signing keys at first start', () => {
  it('creates one active ES256 key, its private half encrypted at rest', async () => {
    const rows = await t.database.db.selectFrom('signing_keys').selectAll().execute()
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    expect(row).toMatchObject({ alg: 'ES256', retired_at: null })
    expect(row.private_key_encrypted).toMatch(/^v1\.[A-Za-z0-9_-]+$/)
    expect(row.private_key_encrypted).not.toContain('PRIVATE')
    expect(row.public_jwk).not.toHaveProperty('d')
    const kek = parseKeyEncryptionKey(t.config.keyEncryptionKey!)
    expect(decryptPrivateKey(row.private_key_encrypted, kek, row.kid)).toContain('BEGIN PRIVATE KEY')
    expect(() =>
      decryptPrivateKey(row.private_key_encrypted, parseKeyEncryptionKey('1'.repeat(64)), row.kid),
    ).toThrow()
    expect(() => decryptPrivateKey(row.private_key_encrypted, kek, 'another-kid')).toThrow()
  })

  it('serves the public keys only, cacheable for a short while', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/)
    const maxAge = Number(/max-age=(\d+)/.exec(res.headers['cache-control'] as string)![1])
    expect(maxAge).toBeGreaterThan(0)
    expect(maxAge).toBeLessThanOrEqual(300)
    const { keys } = res.json()
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' })
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(keys[0]).not.toHaveProperty(secret)
  })

  it('lists keys on the admin API without private material', async () => {
    const res = await t.admin.inject({ method: 'GET', url: '/admin/keys', headers: adminHeaders })
    expect(res.statusCode).toBe(200)
    const [key] = res.json().keys
    expect(key).toMatchObject({ alg: 'ES256', active: true, retired_at: null })
    expect(Object.keys(key).sort()).toEqual([
      'activates_at',
      'active',
      'alg',
      'created_at',
      'kek_id',
      'kid',
      'public_jwk',
      'retired_at',
      'revoked_at',
      'state',
    ])
    expect(key).toMatchObject({
      state: 'active',
      revoked_at: null,
      kek_id: expect.stringMatching(/^[\w-]{16}$/),
    })
    expect(JSON.stringify(res.json())).not.toMatch(/"d":|private/i)
    const unauthorised = await t.admin.inject({ method: 'POST', url: '/admin/keys/rotate' })
    expect(unauthorised.statusCode).toBe(401)
  })
})

describe('key rotation', () => {
  it('signs with the new key at once; tokens of the old key verify until they have expired', async () => {
    const before = await exchangeCode(t, party)
    const oldKid = decodeProtectedHeader(before.access_token).kid
    const rotated = await t.admin.inject({ method: 'POST', url: '/admin/keys/rotate', headers: adminHeaders })
    expect(rotated.statusCode).toBe(201)
    expect(rotated.json()).toMatchObject({ alg: 'ES256', active: true, retired_at: null })
    const newKid = rotated.json().kid
    expect(newKid).not.toBe(oldKid)

    const after = await exchangeCode(t, party)
    expect(decodeProtectedHeader(after.access_token).kid).toBe(newKid)
    const keySet = await jwks()
    expect(keySet.keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort())
    await verify(before.access_token, keySet)
    await verify(after.access_token, keySet)

    const keys = await listKeys()
    expect(keys.find((k) => k.kid === oldKid)).toMatchObject({
      active: false,
      retired_at: clock.now().toISOString(),
    })
    expect(keys.filter((k) => k.active).map((k) => k.kid)).toEqual([newKid])

    // Still published while a token it signed (plus a minute of margin) may be alive, then gone.
    clock.advance(t.config.accessTokenTtl + 59)
    expect((await jwks()).keys.map((k) => k.kid)).toContain(oldKid)
    clock.advance(1)
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKid])
    expect((await listKeys()).map((k) => k.kid)).toContain(oldKid)
  })

  it('reaches another instance on the same database without a restart', async () => {
    const other = await buildTestApp({ clock, database: t.database })
    try {
      const rotated = (
        await t.admin.inject({ method: 'POST', url: '/admin/keys/rotate', headers: adminHeaders })
      ).json()
      // The database's notification may have carried it already; a sync reads it in any case.
      await other.services.signingKeys.syncActiveKey()
      expect(other.services.signingKeys.activeSigningKey().kid).toBe(rotated.kid)
    } finally {
      await other.close()
    }
  })

  it('is picked up by the poll timer within its interval', async () => {
    const deps = { db: t.database.db, clock, config: t.config, logger: createLogger('silent') }
    const watcher = createSigningKeyService(deps, { pollIntervalMs: 50 })
    await watcher.start()
    try {
      const rotated = await t.services.signingKeys.rotate()
      await expect
        .poll(() => watcher.activeSigningKey().kid, { timeout: 3000, interval: 25 })
        .toBe(rotated.kid)
    } finally {
      await watcher.stop()
    }
  })

  it('stops polling once stopped', async () => {
    const deps = { db: t.database.db, clock, config: t.config, logger: createLogger('silent') }
    const watcher = createSigningKeyService(deps, { pollIntervalMs: 20 })
    await watcher.start()
    const kid = watcher.activeSigningKey().kid
    await watcher.stop()
    await t.services.signingKeys.rotate()
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(watcher.activeSigningKey().kid).toBe(kid)
  })

  it('survives two rotations at once, ending with exactly one active key', async () => {
    const [a, b] = await Promise.all([t.services.signingKeys.rotate(), t.services.signingKeys.rotate()])
    expect(a.kid).not.toBe(b.kid)
    const active = (await listKeys()).filter((k) => k.active)
    expect(active).toHaveLength(1)
    expect([a.kid, b.kid]).toContain(active[0]!.kid)
  })
})

describe('two instances starting at once on an empty database', () => {
  it('end with one active key that both sign with', async () => {
    const database = await createTestDatabase()
    try {
      const config = loadConfig({ NODE_ENV: 'test', KEY_ENCRYPTION_KEY: 'A'.repeat(43) })
      const deps = { config, db: database.db, clock, logger: createLogger('silent') }
      const instances = Array.from({ length: 4 }, () => createServices(deps))
      await Promise.all(instances.map((s) => s.signingKeys.start()))
      const rows = await database.db.selectFrom('signing_keys').select(['kid', 'retired_at']).execute()
      expect(rows).toHaveLength(1)
      for (const s of instances) expect(s.signingKeys.activeSigningKey().kid).toBe(rows[0]!.kid)
      for (const s of instances) await s.signingKeys.stop()
    } finally {
      await database.close()
    }
  })
})

describe.each(['EdDSA', 'RS256'] as const)('SIGNING_ALG=%s', (alg) => {
  it('signs access tokens that jose verifies against the JWKS', async () => {
    const app = await buildTestApp({ clock, env: { SIGNING_ALG: alg } })
    try {
      const p = await createParty(app)
      const body = await exchangeCode(app, p)
      const keySet = (await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
      const { protectedHeader } = await jwtVerify(body.access_token, createLocalJWKSet(keySet), {
        typ: 'at+jwt',
        issuer: app.config.issuer,
        audience: app.config.accessTokenAudience,
        currentDate: clock.now(),
        algorithms: [alg],
      })
      expect(protectedHeader.alg).toBe(alg)
      expect(keySet.keys[0]).toMatchObject({ alg, kty: alg === 'EdDSA' ? 'OKP' : 'RSA' })
    } finally {
      await app.close()
    }
  })
})
