import { base64url, CompactSign, exportJWK, type JWK, type CompactJWSHeaderParameters } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/logger.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { dpopKey, type DpopKey, dpopProof } from '../helpers/dpop.js'
import { createParty, jwtClaims, mintCode, type Party } from '../helpers/fixtures.js'
import { checkRedis, deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js'

/**
 * DPoP at the token endpoint through app.inject: every hostile proof is a 400 invalid_dpop_proof
 * that leaves the code usable; proofs seen and nonces hold across instances (the database, Redis).
 */
const redisUp = await checkRedis()
const prefixes: string[] = []
let database: TestDatabase
let clock: TestClock
let key: DpopKey
beforeAll(async () => {
  database = await createTestDatabase()
  clock = createTestClock(new Date('2026-05-01T10:00:00Z'))
  key = await dpopKey()
})
afterAll(async () => {
  await database.close()
  if (redisUp) for (const prefix of prefixes) await deleteKeys(prefix)
})

const app = (env: Record<string, string> = {}) =>
  buildTestApp({ database, clock, env: { ...GENEROUS_LIMITS, ...env } })

function exchange(
  t: TestApp,
  party: Party,
  code: { code: string; verifier: string },
  dpop?: string | string[],
) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(dpop === undefined ? {} : { dpop }),
    },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code.code,
      code_verifier: code.verifier,
      client_id: party.client.id,
    }).toString(),
  })
}

describe('hostile proofs at the token endpoint', () => {
  let t: TestApp
  let party: Party
  beforeAll(async () => {
    t = await app()
    party = await createParty(t)
  })
  afterAll(async () => t.close())

  const proof = (options: { header?: Record<string, unknown>; claims?: Record<string, unknown> } = {}) =>
    dpopProof(key, { issuer: t.config.issuer, now: clock.now(), ...options })

  const hostile: [string, () => Promise<string | string[]>][] = [
    ['typ JWT', () => proof({ header: { typ: 'JWT' } })],
    ['no typ', () => proof({ header: { typ: undefined } })],
    [
      'alg none',
      async () =>
        `${base64url.encode(JSON.stringify({ typ: 'dpop+jwt', alg: 'none', jwk: key.jwk }))}.${base64url.encode('{}')}.AAAA`,
    ],
    [
      'HS256 with a symmetric jwk',
      async () => {
        const secret = new Uint8Array(32).fill(7)
        return new CompactSign(new TextEncoder().encode('{}'))
          .setProtectedHeader({
            typ: 'dpop+jwt',
            alg: 'HS256',
            jwk: { kty: 'oct', k: base64url.encode(secret) } as JWK,
          } as CompactJWSHeaderParameters)
          .sign(secret)
      },
    ],
    ['a private key in jwk', async () => proof({ header: { jwk: await exportJWK(key.privateKey) } })],
    ['a huge header', () => proof({ header: { x: 'x'.repeat(5000) } })],
    ['the wrong htu', () => proof({ claims: { htu: 'https://evil.example/api/oauth/token' } })],
    ['htu of another path', () => proof({ claims: { htu: `${t.config.issuer}/api/oauth/revoke` } })],
    ['the wrong htm', () => proof({ claims: { htm: 'GET' } })],
    ['an old iat', () => proof({ claims: { iat: Math.floor(clock.now().getTime() / 1000) - 3600 } })],
    [
      'an iat in the future',
      () => proof({ claims: { iat: Math.floor(clock.now().getTime() / 1000) + 3600 } }),
    ],
    ['no jti', () => proof({ claims: { jti: undefined } })],
    ['two proofs in one header', async () => `${await proof()}, ${await proof()}`],
    ['two DPoP headers', async () => [await proof(), await proof()]],
    ['an empty header', async () => ''],
    ['garbage', async () => 'not a jwt'],
  ]

  it.each(hostile)('%s: 400 invalid_dpop_proof, and the code stays usable', async (_name, make) => {
    const code = await mintCode(t, party)
    const res = await exchange(t, party, code, await make())
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_dpop_proof', error_description: expect.any(String) })
    expect(res.headers['cache-control']).toBe('no-store')
    const ok = await exchange(t, party, code, await proof())
    expect(ok.statusCode).toBe(200)
    expect(ok.json().token_type).toBe('DPoP')
  })

  it('a replayed proof: the second use is invalid_dpop_proof', async () => {
    const once = await proof()
    expect((await exchange(t, party, await mintCode(t, party), once)).statusCode).toBe(200)
    const replay = await exchange(t, party, await mintCode(t, party), once)
    expect(replay.statusCode).toBe(400)
    expect(replay.json().error).toBe('invalid_dpop_proof')
  })

  it('an EdDSA key is accepted, and cnf.jkt is its thumbprint', async () => {
    const ed = await dpopKey('EdDSA')
    const res = await exchange(
      t,
      party,
      await mintCode(t, party),
      await dpopProof(ed, { issuer: t.config.issuer, now: clock.now() }),
    )
    expect(res.statusCode).toBe(200)
    expect((jwtClaims(res.json().access_token).cnf as { jkt: string }).jkt).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('a Bearer request sends no DPoP-Nonce and stays Bearer', async () => {
    const res = await exchange(t, party, await mintCode(t, party))
    expect(res.statusCode).toBe(200)
    expect(res.json().token_type).toBe('Bearer')
    expect(res.headers['dpop-nonce']).toBeUndefined()
  })
})

describe('across instances', () => {
  it('a proof accepted by one instance is a replay at another (the database)', async () => {
    const [one, two] = [await app(), await app()]
    try {
      const party = await createParty(one)
      const proof = await dpopProof(key, { issuer: one.config.issuer, now: clock.now() })
      expect((await exchange(one, party, await mintCode(one, party), proof)).statusCode).toBe(200)
      const replay = await exchange(two, party, await mintCode(two, party), proof)
      expect(replay.json().error).toBe('invalid_dpop_proof')
      const rows = await database.db.selectFrom('dpop_proof_jtis').select('expires_at').execute()
      expect(rows.length).toBeGreaterThan(0)
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })

  it.skipIf(!redisUp)(
    'with Redis: a replay is recognised at another instance, and nothing is written to the database',
    async () => {
      const prefix = uniquePrefix()
      prefixes.push(prefix)
      const env = { REDIS_URL: TEST_REDIS_URL, RATE_LIMIT_REDIS_PREFIX: prefix }
      const [one, two] = [await app(env), await app(env)]
      try {
        const party = await createParty(one)
        const proof = await dpopProof(key, {
          issuer: one.config.issuer,
          now: clock.now(),
          claims: { jti: 'redis-jti' },
        })
        const before = await database.db.selectFrom('dpop_proof_jtis').select('key_hash').execute()
        expect((await exchange(one, party, await mintCode(one, party), proof)).statusCode).toBe(200)
        expect((await exchange(two, party, await mintCode(two, party), proof)).json().error).toBe(
          'invalid_dpop_proof',
        )
        const after = await database.db.selectFrom('dpop_proof_jtis').select('key_hash').execute()
        expect(after.length).toBe(before.length)
      } finally {
        await Promise.all([one.close(), two.close()])
      }
    },
  )

  it('Redis away: proofs are checked against the database, so a replay is still refused', async () => {
    const t = await app({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_REDIS_PREFIX: uniquePrefix() })
    try {
      const party = await createParty(t)
      const proof = await dpopProof(key, { issuer: t.config.issuer, now: clock.now() })
      expect((await exchange(t, party, await mintCode(t, party), proof)).statusCode).toBe(200)
      expect((await exchange(t, party, await mintCode(t, party), proof)).json().error).toBe(
        'invalid_dpop_proof',
      )
    } finally {
      await t.close()
    }
  })

  it('server nonces: use_dpop_nonce with DPoP-Nonce; a nonce of one instance works at another; old ones expire', async () => {
    const env = { DPOP_NONCE_REQUIRED: 'true' }
    const [one, two] = [await app(env), await app(env)]
    try {
      const party = await createParty(one)
      const code = await mintCode(one, party)
      const first = await exchange(
        one,
        party,
        code,
        await dpopProof(key, { issuer: one.config.issuer, now: clock.now() }),
      )
      expect(first.statusCode).toBe(400)
      expect(first.json().error).toBe('use_dpop_nonce')
      const nonce = first.headers['dpop-nonce'] as string
      expect(nonce).toMatch(/^[0-9a-z]{1,12}\.[A-Za-z0-9_-]{32}$/)

      const withNonce = () =>
        dpopProof(key, { issuer: one.config.issuer, now: clock.now(), claims: { nonce } })
      const ok = await exchange(two, party, code, await withNonce())
      expect(ok.statusCode).toBe(200)
      expect(ok.headers['dpop-nonce']).toBe(nonce)

      // Still good in the next step; two steps on, it is refused with a fresh nonce to use.
      clock.advance(300)
      expect((await exchange(one, party, await mintCode(one, party), await withNonce())).statusCode).toBe(200)
      clock.advance(300)
      const stale = await exchange(one, party, await mintCode(one, party), await withNonce())
      expect(stale.json().error).toBe('use_dpop_nonce')
      expect(stale.headers['dpop-nonce']).not.toBe(nonce)
      const wrong = await exchange(
        one,
        party,
        await mintCode(one, party),
        await dpopProof(key, { issuer: one.config.issuer, now: clock.now(), claims: { nonce: 'made-up' } }),
      )
      expect(wrong.json().error).toBe('use_dpop_nonce')
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })
})

describe('CORS for browser clients', () => {
  it('a preflight allows the DPoP header; answers expose DPoP-Nonce', async () => {
    const t = await app({ DPOP_NONCE_REQUIRED: 'true' })
    try {
      const party = await createParty(t)
      const origin = new URL(party.client.redirectUris[0]!).origin
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/oauth/token',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'dpop',
        },
      })
      expect(preflight.headers['access-control-allow-headers']).toMatch(/\bDPoP\b/)
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        headers: {
          origin,
          'content-type': 'application/x-www-form-urlencoded',
          dpop: await dpopProof(key, { issuer: t.config.issuer, now: clock.now() }),
        },
        payload: `grant_type=refresh_token&refresh_token=${'a'.repeat(43)}&client_id=${party.client.id}`,
      })
      expect(res.json().error).toBe('use_dpop_nonce')
      expect(res.headers['access-control-allow-origin']).toBe(origin)
      expect(res.headers['access-control-expose-headers']).toMatch(/\bDPoP-Nonce\b/)
      expect(res.headers['dpop-nonce']).toBeDefined()
    } finally {
      await t.close()
    }
  })
})

describe('logs', () => {
  it('never carry a DPoP proof', () => {
    const lines: string[] = []
    const logger = createLogger('info', { write: (line: string) => lines.push(line) })
    logger.info(
      { req: { headers: { dpop: 'eyJ.proof.sig' } }, headers: { dpop: 'eyJ.proof.sig' } },
      'a request',
    )
    expect(lines.join('')).not.toContain('eyJ.proof.sig')
    expect(lines.join('')).toContain('[Redacted]')
  })
})
