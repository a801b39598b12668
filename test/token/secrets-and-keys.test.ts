import { generateKeyPairSync } from 'node:crypto'
import { Writable } from 'node:stream'
import { calculateJwkThumbprint } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createServices } from '../../src/services.js'
import {
  decryptPrivateKey,
  encryptPrivateKey,
  parseKeyEncryptionKey,
} from '../../src/tokens/key-encryption.js'
import { jwkThumbprint } from '../../src/tokens/key-material.js'
import type { TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { createParty, exchangeCode, mintCode, tokenRequest } from '../helpers/fixtures.js'

describe('key encryption', () => {
  it('reads KEY_ENCRYPTION_KEY as hex or base64url, 32 bytes either way', () => {
    const hex = 'ab'.repeat(32)
    expect(parseKeyEncryptionKey(hex)).toEqual(Buffer.from(hex, 'hex'))
    const b64 = Buffer.alloc(32, 7).toString('base64url')
    expect(b64).toHaveLength(43)
    expect(parseKeyEncryptionKey(b64)).toEqual(Buffer.alloc(32, 7))
    expect(parseKeyEncryptionKey(`${b64}=`)).toEqual(Buffer.alloc(32, 7))
  })

  it('round-trips, uses a fresh IV each time, and refuses a tampered ciphertext', () => {
    const key = parseKeyEncryptionKey('0'.repeat(64))
    const a = encryptPrivateKey('secret pem', key, 'kid-1')
    const b = encryptPrivateKey('secret pem', key, 'kid-1')
    expect(a).not.toBe(b)
    expect(decryptPrivateKey(a, key, 'kid-1')).toBe('secret pem')
    const raw = Buffer.from(a.slice(3), 'base64url')
    raw[raw.length - 1]! ^= 1
    expect(() => decryptPrivateKey(`v1.${raw.toString('base64url')}`, key, 'kid-1')).toThrow()
  })
})

describe('kid = RFC 7638 thumbprint', () => {
  it.each([
    ['EC', generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey],
    ['OKP', generateKeyPairSync('ed25519').publicKey],
    ['RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey],
  ])('agrees with jose for %s keys', async (_kty, publicKey) => {
    const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>
    expect(jwkThumbprint(jwk)).toBe(await calculateJwkThumbprint(jwk as never, 'sha256'))
  })
})

describe('logs', () => {
  const lines: string[] = []
  let database: TestDatabase
  let t: TestApp
  beforeAll(async () => {
    database = await createTestDatabase()
    const config = loadConfig({ NODE_ENV: 'test', KEY_ENCRYPTION_KEY: '0'.repeat(64), LOG_LEVEL: 'trace' })
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString())
        done()
      },
    })
    const deps = { config, db: database.db, clock: createTestClock(), logger: createLogger('trace', sink) }
    const services = createServices(deps)
    const app = await buildApp({ ...deps, services })
    t = { app, admin: app, database, services, config, clock: deps.clock, close: async () => {} }
  })
  afterAll(async () => {
    await t.app.close()
    await database.close()
  })

  it('never contain codes, verifiers or refresh tokens, in success or failure', async () => {
    const party = await createParty(t)
    const minted = await mintCode(t, party)
    const issued = await exchangeCode(t, party)
    await tokenRequest(t, { code: minted.code, code_verifier: 'x'.repeat(43), client_id: party.client.id })
    await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: issued.refresh_token,
      client_id: 'nobody',
    })
    const rotated = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: issued.refresh_token,
      client_id: party.client.id,
    })
    expect(rotated.statusCode).toBe(200)
    await t.app.inject({
      method: 'POST',
      url: `/api/oauth/token?code=${minted.code}&refresh_token=${issued.refresh_token}`,
    })
    const log = lines.join('')
    expect(log).toContain('/api/oauth/token')
    for (const secret of [minted.code, minted.verifier, issued.refresh_token, rotated.json().refresh_token])
      expect(log).not.toContain(secret)
  })
})
