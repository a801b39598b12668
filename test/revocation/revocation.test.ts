import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken } from '../../src/lib/secrets.js'
import type { TestApp } from '../helpers/app.js'
import type { TestClock } from '../helpers/clock.js'
import {
  appWithParty,
  createParty,
  exchangeCode,
  jwtClaims,
  type Party,
  tokenRequest,
} from '../helpers/fixtures.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

let t: TestApp
let clock: TestClock
let party: Party
let rs: ResourceServerCredentials
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
  rs = await createResourceServer(t)
})
afterAll(async () => t?.close())

const refresh = (token: string, clientId = party.client.id) =>
  tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: clientId })

/** RFC 7009 §2.2: 200, and a body the client ignores: `{}` as JSON, which every client library accepts. */
function expectEmpty200(res: Awaited<ReturnType<typeof revokeRequest>>) {
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(res.json()).toEqual({})
  expect(res.headers['cache-control']).toBe('no-store')
}

describe('POST /api/oauth/revoke with a refresh token', () => {
  it.each(['form', 'json'] as const)(
    'revokes its family and the family’s access tokens (%s)',
    async (enc) => {
      const first = await exchangeCode(t, party)
      const rotated = (await refresh(first.refresh_token)).json()
      const other = await exchangeCode(t, party)
      const res = await revokeRequest(
        t,
        { token: rotated.refresh_token, token_type_hint: 'refresh_token', client_id: party.client.id },
        enc,
      )
      expectEmpty200(res)
      expect((await refresh(rotated.refresh_token)).json().error).toBe('invalid_grant')
      for (const token of [first.access_token, rotated.access_token, rotated.refresh_token])
        expect(await introspect(t, rs, token)).toEqual({ active: false })
      // Another family of the same grant is untouched.
      expect((await introspect(t, rs, other.access_token)).active).toBe(true)
      expect((await refresh(other.refresh_token)).statusCode).toBe(200)
      const family = await t.database.db
        .selectFrom('refresh_families')
        .select(['revoked_at', 'revoked_reason'])
        .where('id', '=', String(jwtClaims(first.access_token).family_id))
        .executeTakeFirstOrThrow()
      expect(family).toEqual({ revoked_at: clock.now(), revoked_reason: 'revoked_by_client' })
    },
  )

  it('is idempotent: revoking twice answers 200 both times', async () => {
    const tokens = await exchangeCode(t, party)
    expectEmpty200(await revokeRequest(t, { token: tokens.refresh_token, client_id: party.client.id }))
    expectEmpty200(await revokeRequest(t, { token: tokens.refresh_token, client_id: party.client.id }))
  })
})

describe('POST /api/oauth/revoke with an access token', () => {
  it('deny-lists its jti until its exp; its refresh token still works', async () => {
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    expectEmpty200(
      await revokeRequest(t, {
        token: tokens.access_token,
        token_type_hint: 'access_token',
        client_id: party.client.id,
      }),
    )
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    const row = await t.database.db
      .selectFrom('revoked_access_tokens')
      .selectAll()
      .where('jti', '=', String(claims.jti))
      .executeTakeFirstOrThrow()
    expect(row.expires_at).toEqual(new Date(Number(claims.exp) * 1000))
    const next = await refresh(tokens.refresh_token)
    expect(next.statusCode).toBe(200)
    expect((await introspect(t, rs, next.json().access_token)).active).toBe(true)
  })

  it('with a wrong hint the server still finds the token (RFC 7009 §2.1)', async () => {
    const tokens = await exchangeCode(t, party)
    await revokeRequest(t, {
      token: tokens.access_token,
      token_type_hint: 'refresh_token',
      client_id: party.client.id,
    })
    await revokeRequest(t, {
      token: tokens.refresh_token,
      token_type_hint: 'access_token',
      client_id: party.client.id,
    })
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('ignores an unknown hint and revokes anyway', async () => {
    const tokens = await exchangeCode(t, party)
    expectEmpty200(
      await revokeRequest(t, {
        token: tokens.refresh_token,
        token_type_hint: 'id_token',
        client_id: party.client.id,
      }),
    )
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('ignores an expired access token with 200 and writes nothing', async () => {
    const tokens = await exchangeCode(t, party)
    clock.advance(t.config.accessTokenTtl + 1)
    expectEmpty200(await revokeRequest(t, { token: tokens.access_token, client_id: party.client.id }))
    const row = await t.database.db
      .selectFrom('revoked_access_tokens')
      .select('jti')
      .where('jti', '=', String(jwtClaims(tokens.access_token).jti))
      .executeTakeFirst()
    expect(row).toBeUndefined()
  })
})

describe('tokens that are not revoked', () => {
  it('another client’s tokens: 200, and they stay active', async () => {
    const victim = await createParty(t)
    const tokens = await exchangeCode(t, victim)
    for (const token of [tokens.access_token, tokens.refresh_token])
      expectEmpty200(await revokeRequest(t, { token, client_id: party.client.id }))
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(true)
  })

  it.each([
    ['an unknown refresh token', randomToken()],
    ['a malformed token', 'x'],
    ['a JWT-looking string', 'a.b.c'],
    ['a NUL byte', `${randomToken()}\u0000`],
  ])('%s: 200', async (_name, token) => {
    expectEmpty200(await revokeRequest(t, { token, client_id: party.client.id }))
  })
})

describe('request errors', () => {
  it('a missing token is invalid_request', async () => {
    const res = await revokeRequest(t, { client_id: party.client.id })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
    expect(res.headers['cache-control']).toBe('no-store')
  })

  it.each([
    ['missing client_id', 400, 'invalid_request', undefined],
    ['unknown client_id', 401, 'invalid_client', 'unknown-client-id'],
    ['malformed client_id', 401, 'invalid_client', 'bad id!'],
  ])('%s: %i %s, and nothing is revoked', async (_name, status, error, clientId) => {
    const tokens = await exchangeCode(t, party)
    const res = await revokeRequest(t, {
      token: tokens.refresh_token,
      ...(clientId === undefined ? {} : { client_id: clientId }),
    })
    expect(res.statusCode).toBe(status)
    expect(res.json().error).toBe(error)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(true)
  })

  it('a disabled client is invalid_client', async () => {
    const p = await createParty(t)
    const tokens = await exchangeCode(t, p)
    await t.services.clients.disableClient(p.client.id)
    const res = await revokeRequest(t, { token: tokens.refresh_token, client_id: p.client.id })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })

  it('a repeated parameter or an unsupported media type is refused, never a 500', async () => {
    const repeated = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=a&token=b&client_id=${party.client.id}`,
    })
    expect(repeated.statusCode).toBe(400)
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { 'content-type': 'text/plain' },
      payload: 'token=a',
    })
    expect(text.statusCode).toBe(415)
  })
})
