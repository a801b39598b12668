import { generateKeyPairSync, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken } from '../../src/lib/secrets.js'
import { createLogger } from '../../src/logger.js'
import { createServices } from '../../src/services.js'
import { signJwt } from '../../src/tokens/access-token.js'
import { adminHeaders, type TestApp } from '../helpers/app.js'
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
  basicAuth,
  createResourceServer,
  introspect,
  introspectRequest,
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

const INACTIVE = { active: false }

describe('introspection authentication', () => {
  async function expectUnauthorized(authorization: string | undefined) {
    const tokens = await exchangeCode(t, party)
    const res = await introspectRequest(t, { token: tokens.access_token }, authorization)
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Basic realm="linkauth"')
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json().error).toBe('invalid_client')
    expect(res.body).not.toContain(tokens.access_token)
  }

  it('refuses a call without credentials', () => expectUnauthorized(undefined))
  it('refuses a wrong secret', () => expectUnauthorized(basicAuth(rs.id, randomToken(32))))
  it('refuses an unknown id', () => expectUnauthorized(basicAuth('rs_unknownunknown', rs.secret)))
  it.each([
    'Basic',
    'Basic !!!notbase64',
    `Basic ${Buffer.from('no-colon').toString('base64')}`,
    `Basic ${Buffer.from(':onlysecret').toString('base64')}`,
    `Basic ${Buffer.from('id%ZZ:secret').toString('base64')}`,
    `Basic ${Buffer.from('id\u0000x:secret').toString('base64')}`,
    'Bearer something',
  ])('refuses a malformed Authorization header %#', (header) => expectUnauthorized(header))

  it('decodes form-urlencoded parts (RFC 6749 §2.3.1)', async () => {
    const tokens = await exchangeCode(t, party)
    const encodedId = rs.id.replace(/_/g, '%5F')
    const header = `Basic ${Buffer.from(`${encodedId}:${rs.secret}`).toString('base64')}`
    const res = await introspectRequest(t, { token: tokens.access_token }, header)
    expect(res.statusCode).toBe(200)
    expect(res.json().active).toBe(true)
  })

  it('needs a token parameter', async () => {
    const res = await introspectRequest(t, {}, basicAuth(rs.id, rs.secret))
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })
})

describe('active tokens', () => {
  it.each(['form', 'json'] as const)('describes a live access token (%s)', async (encoding) => {
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    const res = await introspectRequest(
      t,
      { token: tokens.access_token, token_type_hint: 'access_token' },
      basicAuth(rs.id, rs.secret),
      encoding,
    )
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({
      active: true,
      scope: 'links:read links:write',
      client_id: party.client.id,
      sub: party.userId,
      exp: claims.exp,
      iat: claims.iat,
      iss: t.config.issuer,
      aud: t.config.accessTokenAudience,
      jti: claims.jti,
      token_type: 'Bearer',
      client_standing: 'verified',
    })
  })

  it('a refresh token, live and of the caller’s own API, is inactive for every resource server', async () => {
    const tokens = await exchangeCode(t, party)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(true)
    const other = await createResourceServer(t, 'Another API')
    for (const caller of [rs, other])
      for (const hint of [
        {},
        { token_type_hint: 'refresh_token' },
        { token_type_hint: 'access_token' },
      ] as Record<string, string>[]) {
        const res = await introspectRequest(
          t,
          { token: tokens.refresh_token, ...hint },
          basicAuth(caller.id, caller.secret),
        )
        expect(res.statusCode).toBe(200)
        expect(res.json()).toEqual(INACTIVE)
      }
    // Nothing was spent: the client still refreshes with it.
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.client.id,
    })
    expect(res.statusCode, res.body).toBe(200)
  })
})

describe('inactive tokens answer {active: false} and nothing else', () => {
  it('an expired access token and an expired refresh token', async () => {
    const tokens = await exchangeCode(t, party)
    // Seen (and remembered as verified) while live; expiry is still checked on every call.
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    clock.advance(t.config.accessTokenTtl - 1)
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    clock.advance(1)
    expect(await introspect(t, rs, tokens.access_token)).toEqual(INACTIVE)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(true)
    clock.advance(t.config.refreshTokenTtl)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('tokens of a revoked grant', async () => {
    const p = await createParty(t)
    const tokens = await exchangeCode(t, p)
    expect(await t.services.connectedApps.revoke(p.userId, p.client.id)).toBe(true)
    expect(await introspect(t, rs, tokens.access_token)).toEqual(INACTIVE)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('tokens of a revoked family, while a sibling family stays active', async () => {
    const revoked = await exchangeCode(t, party)
    const sibling = await exchangeCode(t, party)
    const res = await revokeRequest(t, { token: revoked.refresh_token, client_id: party.client.id })
    expect(res.statusCode).toBe(200)
    expect(await introspect(t, rs, revoked.access_token)).toEqual(INACTIVE)
    expect(await refreshTokenIsLive(t, revoked.refresh_token)).toBe(false)
    expect((await introspect(t, rs, sibling.access_token)).active).toBe(true)
    expect(await refreshTokenIsLive(t, sibling.refresh_token)).toBe(true)
  })

  it('answers concurrent introspections of live and revoked tokens each for itself (one statement for many)', async () => {
    const live = await Promise.all(Array.from({ length: 6 }, () => exchangeCode(t, party)))
    const revoked = await Promise.all(Array.from({ length: 6 }, () => exchangeCode(t, party)))
    for (const tokens of revoked) {
      expect(
        (await revokeRequest(t, { token: tokens.refresh_token, client_id: party.client.id })).statusCode,
      ).toBe(200)
    }
    // Interleaved (live access, revoked refresh, revoked access, live refresh, …) and sent at once,
    // so that live and revoked tokens share batches; refresh tokens are never active here.
    const asked = live.flatMap((tokens, i) => [
      { token: tokens.access_token, active: true },
      { token: revoked[i]!.refresh_token, active: false },
      { token: revoked[i]!.access_token, active: false },
      { token: tokens.refresh_token, active: false },
    ])
    const answers = await Promise.all(asked.map(({ token }) => introspect(t, rs, token)))
    expect(answers.map((a) => a.active)).toEqual(asked.map((a) => a.active))
  })

  it('a deny-listed access token', async () => {
    const tokens = await exchangeCode(t, party)
    await revokeRequest(t, { token: tokens.access_token, client_id: party.client.id })
    expect(await introspect(t, rs, tokens.access_token)).toEqual(INACTIVE)
  })

  it('a rotated refresh token (its successor is active)', async () => {
    const tokens = await exchangeCode(t, party)
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.client.id,
    })
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
    expect(await refreshTokenIsLive(t, res.json().refresh_token)).toBe(true)
  })

  it.each([
    ['an unknown refresh token', () => randomToken()],
    ['a malformed token', () => 'not a token'],
    ['a string of dots', () => '...'],
    ['three garbage segments', () => 'a.b.c'],
    ['a NUL byte', () => `${randomToken()}\u0000`],
    ['an unsigned JWT', () => unsignedJwt()],
  ])('%s', async (_name, token) => {
    expect(await introspect(t, rs, token())).toEqual(INACTIVE)
  })

  it('an access token whose signature was tampered with', async () => {
    const tokens = await exchangeCode(t, party)
    const [h, p, s] = tokens.access_token.split('.') as [string, string, string]
    const flipped = `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`
    expect(await introspect(t, rs, `${h}.${p}.${flipped}`)).toEqual(INACTIVE)
    // A payload changed under the original signature.
    const claims = { ...jwtClaims(tokens.access_token), scope: 'links:read links:write products:sync' }
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`
    expect(await introspect(t, rs, forged)).toEqual(INACTIVE)
  })

  it('an access token signed by a foreign key, under our kid or its own', async () => {
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    const ours = t.services.signingKeys.activeSigningKey()
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const underOurKid = signJwt({ typ: 'at+jwt' }, claims, { kid: ours.kid, alg: 'ES256', privateKey })
    const underOwnKid = signJwt({ typ: 'at+jwt' }, claims, { kid: 'foreign', alg: 'ES256', privateKey })
    expect(await introspect(t, rs, underOurKid)).toEqual(INACTIVE)
    expect(await introspect(t, rs, underOwnKid)).toEqual(INACTIVE)
  })

  it('a token signed by our key but with another issuer, or without typ at+jwt', async () => {
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    const ours = t.services.signingKeys.activeSigningKey()
    const wrongIss = signJwt({ typ: 'at+jwt' }, { ...claims, iss: 'https://evil.example' }, ours)
    const plainJwt = signJwt({ typ: 'JWT' }, claims, ours)
    const resigned = signJwt({ typ: 'at+jwt' }, claims, ours)
    expect(await introspect(t, rs, wrongIss)).toEqual(INACTIVE)
    expect(await introspect(t, rs, plainJwt)).toEqual(INACTIVE)
    expect((await introspect(t, rs, resigned)).active).toBe(true) // the control: only the change matters
  })

  it('a token naming another grant or family than its own', async () => {
    const a = await exchangeCode(t, party)
    const other = await createParty(t)
    const b = await exchangeCode(t, other)
    const ours = t.services.signingKeys.activeSigningKey()
    const mixed = signJwt(
      { typ: 'at+jwt' },
      { ...jwtClaims(a.access_token), family_id: jwtClaims(b.access_token).family_id },
      ours,
    )
    expect(await introspect(t, rs, mixed)).toEqual(INACTIVE)
  })

  it('tokens of a disabled client', async () => {
    const p = await createParty(t)
    const tokens = await exchangeCode(t, p)
    const res = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${p.client.id}`,
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(200)
    expect(await introspect(t, rs, tokens.access_token)).toEqual(INACTIVE)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('tokens of a deleted user', async () => {
    const p = await createParty(t)
    const tokens = await exchangeCode(t, p)
    const res = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/users/${p.userId}`,
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(204)
    expect(await introspect(t, rs, tokens.access_token)).toEqual(INACTIVE)
    expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
  })

  it('an access token of a retired key stays active; its key is found without a restart', async () => {
    const tokens = await exchangeCode(t, party)
    await t.services.signingKeys.rotate()
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    const fresh = await exchangeCode(t, party)
    expect((await introspect(t, rs, fresh.access_token)).active).toBe(true)
  })
})

describe('keys made by another instance', () => {
  it('a token signed with a key rotated in elsewhere is verified without waiting for the poll', async () => {
    const other = createServices({
      config: t.config,
      db: t.database.db,
      clock,
      logger: createLogger('silent'),
    })
    await other.signingKeys.start()
    try {
      await other.signingKeys.rotate()
      const tokens = await exchangeCode(t, party) // still signed by this instance's (now retired) key
      const claims = jwtClaims(tokens.access_token)
      const fromOther = other.accessTokens.issueAccessToken({
        userId: party.userId,
        clientId: party.client.id,
        scopes: ['links:read'],
        grantId: String(claims.grant_id),
        familyId: String(claims.family_id),
        clientStanding: 'verified',
      })
      expect((await introspect(t, rs, fromOther.accessToken)).active).toBe(true)
      expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    } finally {
      await other.signingKeys.stop()
    }
  })
})

function unsignedJwt(): string {
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')
  const payload = Buffer.from(JSON.stringify({ jti: randomUUID() })).toString('base64url')
  return `${header}.${payload}.`
}
