import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
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

let t: TestApp
let clock: TestClock
let party: Party
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
})
afterAll(async () => t?.close())

const DAY = 24 * 3600

function refresh(
  refreshToken: string,
  extra: Record<string, string> = {},
  encoding: 'form' | 'json' = 'form',
) {
  return tokenRequest(
    t,
    { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: party.client.id, ...extra },
    encoding,
  )
}

function expectError(res: Awaited<ReturnType<typeof refresh>>, status: number, error: string) {
  expect({ status: res.statusCode, error: res.json().error }).toEqual({ status, error })
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
}

function family(id: string) {
  return t.database.db
    .selectFrom('refresh_families')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

describe('refresh_token grant', () => {
  it.each(['form', 'json'] as const)(
    'rotates the token (%s) and keeps the family, grant and user',
    async (enc) => {
      const first = await exchangeCode(t, party)
      const res = await refresh(first.refresh_token, {}, enc)
      expect(res.statusCode).toBe(200)
      expect(res.headers['cache-control']).toBe('no-store')
      expect(res.headers.pragma).toBe('no-cache')
      const second = res.json()
      expect(second).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'links:read links:write' })
      expect(second.refresh_token).not.toBe(first.refresh_token)
      const before = jwtClaims(first.access_token)
      const after = jwtClaims(second.access_token)
      expect(after).toMatchObject({
        sub: before.sub,
        grant_id: before.grant_id,
        family_id: before.family_id,
        client_id: party.client.id,
      })
      expect(after.jti).not.toBe(before.jti)
      const old = await t.database.db
        .selectFrom('refresh_tokens')
        .selectAll()
        .where('token_hash', '=', sha256(first.refresh_token))
        .executeTakeFirstOrThrow()
      expect(old.rotated_at).toEqual(clock.now())
      // The successor works in turn.
      expect((await refresh(second.refresh_token)).statusCode).toBe(200)
    },
  )

  it('narrows the scope on request; without scope it returns to the family’s scope', async () => {
    const first = await exchangeCode(t, party)
    const narrow = await refresh(first.refresh_token, { scope: 'links:read' })
    expect(narrow.statusCode).toBe(200)
    expect(narrow.json().scope).toBe('links:read')
    expect(jwtClaims(narrow.json().access_token).scope).toBe('links:read')
    const back = await refresh(narrow.json().refresh_token)
    expect(back.json().scope).toBe('links:read links:write')
  })

  it('refuses a wider scope with invalid_scope and leaves the token usable', async () => {
    const first = await exchangeCode(t, party)
    expectError(
      await refresh(first.refresh_token, { scope: 'links:read products:sync' }),
      400,
      'invalid_scope',
    )
    expectError(await refresh(first.refresh_token, { scope: 'admin' }), 400, 'invalid_scope')
    expectError(
      await refresh(first.refresh_token, { scope: 'links:read  links:write' }),
      400,
      'invalid_scope',
    )
    expect((await refresh(first.refresh_token)).statusCode).toBe(200)
  })

  it('revokes exactly the family of a reused token; the user’s other family keeps working', async () => {
    const a = await exchangeCode(t, party)
    const b = await exchangeCode(t, party)
    const a2 = (await refresh(a.refresh_token)).json()
    clock.advance(t.config.refreshReuseWindow) // past the retry window: a reuse is theft
    const reuse = await refresh(a.refresh_token)
    expectError(reuse, 400, 'invalid_grant')
    const revoked = await family(jwtClaims(a.access_token).family_id as string)
    expect(revoked.revoked_at).toEqual(clock.now())
    expect(revoked.revoked_reason).toBe('refresh_token_reuse')
    // The legitimate-looking successor dies with its family...
    expectError(await refresh(a2.refresh_token), 400, 'invalid_grant')
    // ...and the other family of the same user and client does not.
    expect((await family(jwtClaims(b.access_token).family_id as string)).revoked_at).toBeNull()
    expect((await refresh(b.refresh_token)).statusCode).toBe(200)
  })

  it('a live or spent token presented by another client: the answer of a random token, and its family is revoked', async () => {
    const other = await createParty(t)
    const asOther = (token: string) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: other.client.id })
    const random = await asOther(randomToken())
    expectError(random, 400, 'invalid_grant')
    // A spent token and a live one, each of its own family: neither answer tells them from a random token.
    const spent = await exchangeCode(t, party)
    const spentNext = (await refresh(spent.refresh_token)).json()
    const live = await exchangeCode(t, party)
    for (const [leaked, tokens] of [
      [spent.refresh_token, spent],
      [live.refresh_token, live],
    ] as const) {
      const res = await asOther(leaked)
      expectError(res, 400, 'invalid_grant')
      expect(res.json()).toEqual(random.json())
      expect(await family(jwtClaims(tokens.access_token).family_id as string)).toMatchObject({
        revoked_at: clock.now(),
        revoked_reason: 'refresh_token_other_client',
      })
    }
    // The token has leaked: its own client's copies die with the family.
    expectError(await refresh(spentNext.refresh_token), 400, 'invalid_grant')
    expectError(await refresh(live.refresh_token), 400, 'invalid_grant')
    // The other client's own families are untouched.
    const own = await exchangeCode(t, other)
    expect((await asOther(own.refresh_token)).statusCode).toBe(200)
  })

  it('answers invalid_client for an unknown or disabled client', async () => {
    const p = await createParty(t)
    const first = await exchangeCode(t, p)
    const unknown = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: 'no-such-client',
    })
    expectError(unknown, 401, 'invalid_client')
    await t.services.clients.disableClient(p.client.id)
    const disabled = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: p.client.id,
    })
    expectError(disabled, 401, 'invalid_client')
  })

  it('refuses an unknown token', async () => {
    expectError(await refresh(randomToken()), 400, 'invalid_grant')
  })

  it('refuses a token whose grant or family has been revoked', async () => {
    const p = await createParty(t)
    const viaGrant = await exchangeCode(t, p)
    await t.database.db
      .updateTable('grants')
      .set({ revoked_at: clock.now() })
      .where('id', '=', p.grant.id)
      .execute()
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: viaGrant.refresh_token,
      client_id: p.client.id,
    })
    expectError(res, 400, 'invalid_grant')

    const viaFamily = await exchangeCode(t, party)
    await t.database.db
      .updateTable('refresh_families')
      .set({ revoked_at: clock.now(), revoked_reason: 'test' })
      .where('id', '=', jwtClaims(viaFamily.access_token).family_id as string)
      .execute()
    expectError(await refresh(viaFamily.refresh_token), 400, 'invalid_grant')
  })

  it('expires a token left idle for REFRESH_TOKEN_TTL, and not a second earlier', async () => {
    const kept = await exchangeCode(t, party)
    const idle = await exchangeCode(t, party)
    clock.advance(30 * DAY - 1)
    expect((await refresh(kept.refresh_token)).statusCode).toBe(200)
    clock.advance(1)
    expectError(await refresh(idle.refresh_token), 400, 'invalid_grant')
  })

  it('ends a family at REFRESH_TOKEN_ABSOLUTE_TTL however often it is used', async () => {
    let token = (await exchangeCode(t, party)).refresh_token
    for (let i = 0; i < 7; i++) {
      clock.advance(25 * DAY) // 175 days after the exchange at the end of the loop
      const res = await refresh(token)
      expect(res.statusCode).toBe(200)
      token = res.json().refresh_token
    }
    // The newest token's idle expiry is capped at the family's end.
    const row = await t.database.db
      .selectFrom('refresh_tokens')
      .select('expires_at')
      .where('token_hash', '=', sha256(token))
      .executeTakeFirstOrThrow()
    expect(row.expires_at.getTime()).toBe(clock.now().getTime() + 5 * DAY * 1000)
    clock.advance(5 * DAY)
    expectError(await refresh(token), 400, 'invalid_grant')
  })

  it('updates grants.last_used_at, at most once a minute', async () => {
    const p = await createParty(t)
    let token = (await exchangeCode(t, p)).refresh_token
    const lastUsed = async () =>
      (
        await t.database.db
          .selectFrom('grants')
          .select('last_used_at')
          .where('id', '=', p.grant.id)
          .executeTakeFirstOrThrow()
      ).last_used_at
    const exchangedAt = clock.now()
    clock.advance(30)
    token = (
      await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: p.client.id })
    ).json().refresh_token
    expect(await lastUsed()).toEqual(exchangedAt)
    clock.advance(31)
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: p.client.id,
    })
    expect(res.statusCode).toBe(200)
    expect(await lastUsed()).toEqual(clock.now())
  })
})
