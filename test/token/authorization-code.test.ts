import { createLocalJWKSet, jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import type { TestApp } from '../helpers/app.js'
import type { TestClock } from '../helpers/clock.js'
import {
  appWithParty,
  createParty,
  mintCode,
  type Party,
  REDIRECT_URI,
  tokenRequest,
} from '../helpers/fixtures.js'

let t: TestApp
let clock: TestClock
let party: Party
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
})
afterAll(async () => t?.close())

function redeem(minted: { code: string; verifier: string }, extra: Record<string, string> = {}) {
  return tokenRequest(t, {
    grant_type: 'authorization_code',
    code: minted.code,
    code_verifier: minted.verifier,
    client_id: party.client.id,
    ...extra,
  })
}

function expectOAuthError(res: Awaited<ReturnType<typeof redeem>>, status: number, error: string) {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { error } })
  expect(typeof res.json().error_description).toBe('string')
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
  expect(res.headers['content-type']).toMatch(/^application\/json/)
}

async function familyOf(code: string) {
  return t.database.db
    .selectFrom('authorization_codes as c')
    .innerJoin('refresh_families as f', 'f.id', 'c.family_id')
    .select(['f.id', 'f.revoked_at', 'f.revoked_reason'])
    .where('c.code_hash', '=', sha256(code))
    .executeTakeFirstOrThrow()
}

describe('authorization_code grant: success', () => {
  it.each(['form', 'json'] as const)(
    'exchanges a code sent as %s for a JWT and a refresh token',
    async (enc) => {
      const minted = await mintCode(t, party)
      const res = await tokenRequest(
        t,
        {
          grant_type: 'authorization_code',
          code: minted.code,
          code_verifier: minted.verifier,
          client_id: party.client.id,
        },
        enc,
      )
      expect(res.statusCode).toBe(200)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers.pragma).toBe('no-cache')
      const body = res.json()
      expect(Object.keys(body).sort()).toEqual([
        'access_token',
        'expires_in',
        'refresh_token',
        'scope',
        'token_type',
      ])
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'links:read links:write' })
      expect(body.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    },
  )

  it('signs an RFC 9068 access token that jose verifies against our JWKS', async () => {
    const minted = await mintCode(t, party)
    const body = (await redeem(minted)).json()
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
    const { payload, protectedHeader } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      typ: 'at+jwt',
      issuer: t.config.issuer,
      audience: t.config.accessTokenAudience,
      currentDate: clock.now(),
      algorithms: ['ES256'],
    })
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' })
    expect(protectedHeader.kid).toBe(jwks.keys[0].kid)
    const family = await familyOf(minted.code)
    expect(payload).toEqual({
      iss: 'http://localhost:3000',
      sub: party.userId,
      aud: 'http://localhost:3000/api',
      iat: Math.floor(clock.now().getTime() / 1000),
      exp: Math.floor(clock.now().getTime() / 1000) + 600,
      jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      client_id: party.client.id,
      scope: 'links:read links:write',
      grant_id: party.grant.id,
      family_id: family.id,
      client_standing: 'verified',
    })
  })

  it('takes a request with a code and no grant_type as authorization_code', async () => {
    const minted = await mintCode(t, party)
    const res = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: party.client.id,
    })
    expect(res.statusCode).toBe(200)
  })

  it('accepts redirect_uri when it equals the code’s, and an empty parameter as absent', async () => {
    const res = await redeem(await mintCode(t, party), { redirect_uri: REDIRECT_URI, scope: '' })
    expect(res.statusCode).toBe(200)
  })

  it('stores only hashes, writes the family, the token and last_used_at in one go', async () => {
    const minted = await mintCode(t, party)
    const body = (await redeem(minted)).json()
    const code = await t.database.db
      .selectFrom('authorization_codes')
      .selectAll()
      .where('code_hash', '=', sha256(minted.code))
      .executeTakeFirstOrThrow()
    expect(code.consumed_at).toEqual(clock.now())
    const token = await t.database.db
      .selectFrom('refresh_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(body.refresh_token))
      .executeTakeFirstOrThrow()
    expect(token.family_id).toBe(code.family_id)
    expect(token.expires_at.getTime()).toBe(clock.now().getTime() + 30 * 24 * 3600 * 1000)
    const family = await t.database.db
      .selectFrom('refresh_families')
      .selectAll()
      .where('id', '=', code.family_id!)
      .executeTakeFirstOrThrow()
    expect(family.expires_at.getTime()).toBe(clock.now().getTime() + 180 * 24 * 3600 * 1000)
    const grant = await t.database.db
      .selectFrom('grants')
      .select('last_used_at')
      .where('id', '=', party.grant.id)
      .executeTakeFirstOrThrow()
    expect(grant.last_used_at).toEqual(clock.now())
    const dump = JSON.stringify(await t.database.db.selectFrom('refresh_tokens').selectAll().execute())
    expect(dump).not.toContain(body.refresh_token)
  })
})

describe('authorization_code grant: refusals', () => {
  it('refuses a replayed code and revokes the family its first redemption started', async () => {
    const minted = await mintCode(t, party)
    const first = (await redeem(minted)).json()
    const replay = await redeem(minted)
    expectOAuthError(replay, 400, 'invalid_grant')
    const family = await familyOf(minted.code)
    expect(family.revoked_at).toEqual(clock.now())
    expect(family.revoked_reason).toBe('code_replay')
    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: party.client.id,
    })
    expectOAuthError(refresh, 400, 'invalid_grant')
  })

  it('revokes the family on a replay long after the first redemption too', async () => {
    const minted = await mintCode(t, party)
    await redeem(minted)
    clock.advance(3600)
    expectOAuthError(await redeem(minted), 400, 'invalid_grant')
    expect((await familyOf(minted.code)).revoked_reason).toBe('code_replay')
  })

  it('refuses an expired code (controlled clock) and accepts one a second before expiry', async () => {
    const expired = await mintCode(t, party)
    const fresh = await mintCode(t, party)
    clock.advance(t.config.authCodeTtl - 1)
    expect((await redeem(fresh)).statusCode).toBe(200)
    clock.advance(1)
    expectOAuthError(await redeem(expired), 400, 'invalid_grant')
  })

  it('refuses an unknown code', async () => {
    expectOAuthError(await redeem({ code: randomToken(), verifier: randomToken(48) }), 400, 'invalid_grant')
  })

  it('refuses a wrong verifier and burns the code (single use, RFC 9700)', async () => {
    const minted = await mintCode(t, party)
    const wrong = await redeem({ code: minted.code, verifier: randomToken(48) })
    expectOAuthError(wrong, 400, 'invalid_grant')
    expect(wrong.json().error_description).toContain('code_verifier')
    expectOAuthError(await redeem(minted), 400, 'invalid_grant')
  })

  it.each([
    ['too short', 'a'.repeat(42)],
    ['too long', 'a'.repeat(129)],
    ['a forbidden character', `${'a'.repeat(42)}+`],
    ['a space', `${'a'.repeat(42)} b`],
  ])('refuses a verifier %s with invalid_request, without burning the code', async (_name, verifier) => {
    const minted = await mintCode(t, party)
    expectOAuthError(await redeem({ code: minted.code, verifier }), 400, 'invalid_request')
    expect((await redeem(minted)).statusCode).toBe(200)
  })

  it('accepts the longest and the oddest legal verifiers', async () => {
    for (const verifier of ['~'.repeat(128), `${'-._~'.repeat(10)}AbC`]) {
      expect((await redeem(await mintCode(t, party, { verifier }))).statusCode).toBe(200)
    }
  })

  it('refuses the code of client A redeemed by client B (invalid_grant), and burns it', async () => {
    const other = await createParty(t)
    const minted = await mintCode(t, party)
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: other.client.id,
    })
    expectOAuthError(res, 400, 'invalid_grant')
    expectOAuthError(await redeem(minted), 400, 'invalid_grant')
  })

  it('refuses a redirect_uri other than the code’s', async () => {
    const res = await redeem(await mintCode(t, party), { redirect_uri: 'https://app.example/other' })
    expectOAuthError(res, 400, 'invalid_grant')
  })

  it('refuses a code whose grant has been revoked', async () => {
    const p = await createParty(t)
    const minted = await mintCode(t, p)
    await t.database.db
      .updateTable('grants')
      .set({ revoked_at: clock.now() })
      .where('id', '=', p.grant.id)
      .execute()
    const res = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: p.client.id,
    })
    expectOAuthError(res, 400, 'invalid_grant')
  })

  it('answers invalid_client (401, WWW-Authenticate) for an unknown or disabled client', async () => {
    const p = await createParty(t)
    const minted = await mintCode(t, p)
    const unknown = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: 'nobody-at-all',
    })
    expectOAuthError(unknown, 401, 'invalid_client')
    expect(unknown.headers['www-authenticate']).toBeDefined()
    await t.services.clients.disableClient(p.client.id)
    const disabled = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: p.client.id,
    })
    expectOAuthError(disabled, 401, 'invalid_client')
    // Neither attempt consumed the code.
    const code = await t.database.db
      .selectFrom('authorization_codes')
      .select('consumed_at')
      .where('code_hash', '=', sha256(minted.code))
      .executeTakeFirstOrThrow()
    expect(code.consumed_at).toBeNull()
  })

  it('an unknown client touches nothing: the code stays usable, a used code’s family stays live', async () => {
    const p = await createParty(t)
    const minted = await mintCode(t, p)
    const asNobody = () =>
      tokenRequest(t, { code: minted.code, code_verifier: minted.verifier, client_id: 'nobody-at-all' })
    expectOAuthError(await asNobody(), 401, 'invalid_client')
    const first = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: p.client.id,
    })
    expect(first.statusCode).toBe(200)
    // A replay by an unknown client is invalid_client, not a replay: the family is not revoked.
    expectOAuthError(await asNobody(), 401, 'invalid_client')
    expect((await familyOf(minted.code)).revoked_at).toBeNull()
  })

  it('answers unauthorized_client for a code with scopes the client is not registered for', async () => {
    const p = await createParty(t, { clientScopes: ['links:read'], grantScopes: ['links:read'] })
    const minted = await mintCode(t, p, { scopes: ['links:read', 'products:sync'] })
    const res = await tokenRequest(t, {
      code: minted.code,
      code_verifier: minted.verifier,
      client_id: p.client.id,
    })
    expectOAuthError(res, 400, 'unauthorized_client')
  })
})

describe('token endpoint: malformed requests', () => {
  const form = (payload: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    })
  const json = (payload: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload,
    })

  it.each([
    ['no grant_type and no code', 'client_id=abc'],
    ['a missing code_verifier', 'grant_type=authorization_code&code=x&client_id=abcdefgh'],
    ['a missing client_id', `grant_type=authorization_code&code=x&code_verifier=${'a'.repeat(43)}`],
    ['a missing code', `grant_type=authorization_code&client_id=abcdefgh&code_verifier=${'a'.repeat(43)}`],
    ['a repeated client_id', `code=x&code_verifier=${'a'.repeat(43)}&client_id=a&client_id=b`],
    [
      'a repeated grant_type',
      'grant_type=refresh_token&grant_type=refresh_token&refresh_token=x&client_id=a',
    ],
    ['a missing refresh_token', 'grant_type=refresh_token&client_id=abcdefgh'],
    ['a huge value', `grant_type=refresh_token&client_id=a&refresh_token=${'x'.repeat(5000)}`],
    ['an empty body', ''],
  ])('refuses a form with %s as invalid_request', async (_name, payload) => {
    expectOAuthError(await form(payload), 400, 'invalid_request')
  })

  it.each([
    ['a number', '{"grant_type":"authorization_code","code":1,"code_verifier":"x","client_id":"a"}'],
    ['an object', '{"grant_type":{"$ne":null},"client_id":"a"}'],
    ['an array', '{"grant_type":["refresh_token"],"client_id":"a"}'],
    ['null', '{"grant_type":"refresh_token","refresh_token":null,"client_id":"a"}'],
    ['a bare string body', '"grant_type=refresh_token"'],
    ['an array body', '[1,2]'],
    ['broken JSON', '{"grant_type":'],
    ['a __proto__ key', '{"__proto__":{"x":1},"grant_type":"refresh_token"}'],
  ])('refuses JSON with %s as invalid_request', async (_name, payload) => {
    expectOAuthError(await json(payload), 400, 'invalid_request')
  })

  it('refuses a redirect_uri with a NUL byte as invalid_request, without touching the code', async () => {
    const minted = await mintCode(t, party)
    const params = { code: minted.code, code_verifier: minted.verifier, client_id: party.client.id }
    const res = await json(JSON.stringify({ ...params, redirect_uri: `${REDIRECT_URI}\u0000` }))
    expectOAuthError(res, 400, 'invalid_request')
    expect((await json(JSON.stringify(params))).statusCode).toBe(200)
  })

  it.each([
    ['a NUL byte', 'abcdefgh\u0000ij'],
    ['a non-ASCII character', 'abcdéfghij'],
    ['too few characters', 'abc'],
  ])('answers invalid_client for a client_id with %s, on both grants', async (_name, clientId) => {
    const verifier = 'a'.repeat(43)
    const code = await json(JSON.stringify({ code: 'x', code_verifier: verifier, client_id: clientId }))
    expectOAuthError(code, 401, 'invalid_client')
    const refresh = await json(
      JSON.stringify({ grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId }),
    )
    expectOAuthError(refresh, 401, 'invalid_client')
    expectOAuthError(
      await form(`code=x&code_verifier=${verifier}&client_id=a%00bcdefghi`),
      401,
      'invalid_client',
    )
  })

  it('refuses an unknown grant type with unsupported_grant_type', async () => {
    expectOAuthError(await form('grant_type=password&username=a&password=b'), 400, 'unsupported_grant_type')
    expectOAuthError(await form('grant_type=client_credentials'), 400, 'unsupported_grant_type')
  })

  it.each([
    ['text/plain', 'grant_type=refresh_token'],
    ['application/xml', '<grant_type/>'],
    ['multipart/form-data; boundary=x', '--x--'],
  ])('refuses content type %s with 415 JSON', async (type, payload) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': type },
      payload,
    })
    expectOAuthError(res, 415, 'invalid_request')
  })

  it('refuses a body over the size limit with 413 JSON', async () => {
    const res = await form(`grant_type=refresh_token&refresh_token=${'x'.repeat(70_000)}`)
    expectOAuthError(res, 413, 'invalid_request')
  })

  it('answers GET with a JSON error, never a page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/oauth/token' })
    expect(res.statusCode).toBeGreaterThanOrEqual(400)
    expect(res.statusCode).toBeLessThan(500)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
  })

  it('never puts a presented secret into an error', async () => {
    const secret = randomToken()
    const res = await form(`grant_type=refresh_token&refresh_token=${secret}&client_id=${party.client.id}`)
    expect(res.statusCode).toBe(400)
    expect(res.body).not.toContain(secret)
  })

  it('never answers a random body with a 5xx', async () => {
    for (let i = 0; i < 40; i++) {
      const fields = [
        'grant_type',
        'code',
        'code_verifier',
        'client_id',
        'refresh_token',
        'scope',
        'redirect_uri',
      ]
      const params = new URLSearchParams()
      for (const f of fields)
        if (Math.random() < 0.6) params.append(f, randomToken(Math.ceil(Math.random() * 60)))
      if (Math.random() < 0.5)
        params.set('grant_type', Math.random() < 0.5 ? 'refresh_token' : 'authorization_code')
      const res = await form(params.toString())
      expect(res.statusCode, params.toString()).toBeLessThan(500)
    }
  })
})
