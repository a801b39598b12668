import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField } from '../helpers/browser.js'
import { createStream, eventLog, revokes, type VerifiedSet } from '../helpers/events.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  tokenRequest,
} from '../helpers/fixtures.js'
import {
  createResourceServer,
  introspect,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

/**
 * Every way a revocation happens writes its event in the same transaction (triggers), and the feed
 * names exactly what introspection stops accepting: a token is revoked for a verifier when its
 * grant_id, family_id, jti or client_id is in an event it received.
 */
let t: TestApp
let rs: ResourceServerCredentials
let stream: string
/** ACCESS_TOKEN_TTL (600) + the 60 s leeway. */
const LIFETIME = 660

beforeAll(async () => {
  // No refresh retry window, so that presenting a spent token at once is the reuse that revokes
  // (test/token/refresh-retry-window.test.ts moves a test clock past the window instead).
  t = await buildTestApp({ env: { REFRESH_REUSE_WINDOW: '0' } })
  rs = await createResourceServer(t)
  stream = await createStream(t, rs)
})
afterAll(async () => t.close())

const log = eventLog(() => ({ t, rs, stream }))
beforeEach(() => log.mark())
const newEvents = log.newEvents

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** `until` is the revocation time + ACCESS_TOKEN_TTL + leeway (give or take the test's own seconds). */
function expectUntilFromNow(event: Record<string, unknown>) {
  expect(event.until).toBeGreaterThanOrEqual(nowSeconds() + LIFETIME - 30)
  expect(event.until).toBeLessThanOrEqual(nowSeconds() + LIFETIME + 1)
}

const refresh = (party: Party, token: string) =>
  tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id })

describe('issuing writes no events', () => {
  it('code exchange, refresh rotation, consent and the grant being used', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    expect((await refresh(party, tokens.refresh_token)).statusCode).toBe(200)
    await t.services.grants.approveAndIssueCode({
      userId: party.userId,
      clientId: party.client.id,
      redirectUri: party.client.redirectUris[0]!,
      scopes: ['links:read', 'ecommerce:write'],
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    expect(await newEvents()).toEqual([])
  })
})

describe('the user revokes an application on /account/apps', () => {
  it('one grant-revoked event, none for the families revoked with it', async () => {
    const party = await createParty(t)
    const first = await exchangeCode(t, party)
    const second = await exchangeCode(t, party)
    const user = await t.services.users.findUser(party.userId)
    const browser = new Browser(t.app)
    expect((await browser.signIn(user!.email, 'correct horse battery')).statusCode).toBe(303)
    const page = await browser.get('/account/apps')
    const res = await browser.post(`/account/apps/${party.client.id}/revoke`, {
      csrf_token: hiddenField(page.body, 'csrf_token'),
    })
    expect(res.statusCode).toBe(303)

    const events = await newEvents()
    expect(events).toHaveLength(1)
    expect(events[0]!.type).toBe('urn:linkauth:event:grant-revoked')
    expect(Object.keys(events[0]!.event).sort()).toEqual(['grant_id', 'until'])
    expect(events[0]!.event.grant_id).toBe(party.grant.id)
    expectUntilFromNow(events[0]!.event)
    for (const token of [first.access_token, second.access_token]) {
      expect(await introspect(t, rs, token)).toEqual({ active: false })
      expect(revokes(events, token)).toBe(true)
    }
    // Revoking again changes nothing and says nothing.
    expect(await t.services.connectedApps.revoke(party.userId, party.client.id)).toBe(false)
    expect(await newEvents()).toEqual([])
  })

  it('another user’s token of the same application stays good', async () => {
    const party = await createParty(t)
    const other = await createParty(t)
    const otherTokens = await exchangeCode(t, other)
    await t.services.connectedApps.revoke(party.userId, party.client.id)
    const events = await newEvents()
    expect(events).toHaveLength(1)
    expect(revokes(events, otherTokens.access_token)).toBe(false)
    expect((await introspect(t, rs, otherTokens.access_token)).active).toBe(true)
  })
})

describe('the operator', () => {
  it('disables a client: one client-disabled event covers every user’s grant', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const user2 = await t.services.users.createUser({
      email: `second-${Date.now()}@example.com`,
      password: 'correct horse battery',
    })
    await t.services.grants.approveAndIssueCode({
      userId: user2.id,
      clientId: party.client.id,
      redirectUri: party.client.redirectUris[0]!,
      scopes: ['links:read'],
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    const res = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(200)

    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:client-disabled'])
    expect(events[0]!.event).toEqual({ client_id: party.client.id, until: expect.any(Number) })
    expectUntilFromNow(events[0]!.event)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(revokes(events, tokens.access_token)).toBe(true)
    // Disabling again: nothing new.
    await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(await newEvents()).toEqual([])
  })

  it('deletes a user: one grant-revoked event per live grant, by cascade', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const otherClient = await t.services.clients.createClient({
      name: 'Second App',
      redirect_uris: ['https://second.example/cb'],
    })
    const second = await t.services.grants.approveAndIssueCode({
      userId: party.userId,
      clientId: otherClient.id,
      redirectUri: 'https://second.example/cb',
      scopes: ['links:read'],
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    const res = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/users/${party.userId}`,
      headers: adminHeaders,
    })
    expect(res.statusCode).toBe(204)

    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual([
      'urn:linkauth:event:grant-revoked',
      'urn:linkauth:event:grant-revoked',
    ])
    expect(events.map((e) => e.event.grant_id).sort()).toEqual([party.grant.id, second.grantId].sort())
    for (const e of events) expectUntilFromNow(e.event)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(revokes(events, tokens.access_token)).toBe(true)
  })

  it('deletes a client row: one client-disabled event, none for its grants', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    await t.database.db.deleteFrom('clients').where('id', '=', party.client.id).execute()
    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:client-disabled'])
    expect(events[0]!.event.client_id).toBe(party.client.id)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(revokes(events, tokens.access_token)).toBe(true)
  })
})

describe('one refresh family is revoked', () => {
  function expectFamilyEvent(events: VerifiedSet[], party: Party, accessToken: string) {
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:family-revoked'])
    const claims = jwtClaims(accessToken)
    expect(events[0]!.event).toEqual({
      family_id: claims.family_id,
      grant_id: party.grant.id,
      until: expect.any(Number),
    })
    expectUntilFromNow(events[0]!.event)
  }

  it('by refresh token reuse', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const sibling = await exchangeCode(t, party)
    const rotated = (await refresh(party, tokens.refresh_token)).json()
    expect((await refresh(party, tokens.refresh_token)).json().error).toBe('invalid_grant')
    const events = await newEvents()
    expectFamilyEvent(events, party, tokens.access_token)
    expect(await introspect(t, rs, rotated.access_token)).toEqual({ active: false })
    expect(revokes(events, rotated.access_token)).toBe(true)
    // The grant's other family lives on, and the feed does not name it.
    expect((await introspect(t, rs, sibling.access_token)).active).toBe(true)
    expect(revokes(events, sibling.access_token)).toBe(false)
  })

  it('by an authorization code presented again', async () => {
    const party = await createParty(t)
    const { code, verifier } = await mintCode(t, party)
    const exchange = () =>
      tokenRequest(t, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.client.id,
      })
    const tokens = (await exchange()).json()
    expect((await exchange()).json().error).toBe('invalid_grant')
    const events = await newEvents()
    expectFamilyEvent(events, party, tokens.access_token)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(revokes(events, tokens.access_token)).toBe(true)
  })

  it('by RFC 7009 revocation of a refresh token', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    await revokeRequest(t, { token: tokens.refresh_token, client_id: party.client.id })
    const events = await newEvents()
    expectFamilyEvent(events, party, tokens.access_token)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    // Again: the family is revoked already, so nothing new.
    await revokeRequest(t, { token: tokens.refresh_token, client_id: party.client.id })
    expect(await newEvents()).toEqual([])
  })

  it('a family deleted while its grant lives is revoked for the feed too', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const familyId = String(jwtClaims(tokens.access_token).family_id)
    await t.database.db.deleteFrom('refresh_families').where('id', '=', familyId).execute()
    const events = await newEvents()
    expectFamilyEvent(events, party, tokens.access_token)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
  })
})

describe('one access token is revoked (RFC 7009)', () => {
  it('one access-token-revoked event, kept until the token’s exp + leeway', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    await revokeRequest(t, { token: tokens.access_token, client_id: party.client.id })
    await revokeRequest(t, { token: tokens.access_token, client_id: party.client.id })
    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:access-token-revoked'])
    expect(events[0]!.event).toEqual({ jti: claims.jti, until: Number(claims.exp) + 60 })
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect(revokes(events, tokens.access_token)).toBe(true)
    // Its family lives: the next access token is not named.
    const next = (await refresh(party, tokens.refresh_token)).json()
    expect((await introspect(t, rs, next.access_token)).active).toBe(true)
    expect(revokes(events, next.access_token)).toBe(false)
  })
})

describe('a revocation that fails writes no event', () => {
  it('a disabled-client transaction that rolls back leaves neither the revocation nor its event', async () => {
    const party = await createParty(t)
    await t.database.db
      .transaction()
      .execute(async (trx) => {
        await t.services.grants.revokeAllForClient(party.client.id, trx)
        throw new Error('rolled back')
      })
      .catch(() => undefined)
    expect(await t.services.grants.findLiveGrant(party.userId, party.client.id)).toBeDefined()
    expect(await newEvents()).toEqual([])
  })
})
