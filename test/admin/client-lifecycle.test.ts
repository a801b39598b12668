import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import { createStream, eventLog, revokes } from '../helpers/events.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  tokenRequest,
} from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { OAuthError } from '../../src/errors.js'
import { sql } from 'kysely'

/**
 * PATCH /admin/clients/:id and POST /admin/clients/:id/enable: partial updates with the creation
 * rules, display metadata, and what narrowing a client does to what was granted under it.
 */
let t: TestApp
const clock = createTestClock()
let rs: ResourceServerCredentials
let stream: string

beforeAll(async () => {
  t = await buildTestApp({ clock })
  rs = await createResourceServer(t)
  stream = await createStream(t, rs)
})
afterAll(async () => t.close())

const log = eventLog(() => ({ t, rs, stream }))
beforeEach(() => log.mark())
const newEvents = log.newEvents

const patch = (id: string, payload: unknown) =>
  t.admin.inject({
    method: 'PATCH',
    url: `/admin/clients/${id}`,
    headers: adminHeaders,
    payload: payload as object,
  })
const refresh = (party: Party, token: string, scope?: string) =>
  tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: party.client.id,
    ...(scope ? { scope } : {}),
  })

describe('PATCH /admin/clients/:id', () => {
  it('changes only the fields given and keeps the others', async () => {
    const party = await createParty(t, { clientScopes: ['links:read', 'links:write'] })
    const res = await patch(party.client.id, {
      name: 'Renamed App',
      description: 'Short links for <your> team & friends.',
      homepage_url: 'https://app.example/',
      privacy_policy_url: 'https://app.example/privacy',
      terms_url: 'https://app.example/terms',
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      client_id: party.client.id,
      name: 'Renamed App',
      redirect_uris: party.client.redirectUris,
      scopes: ['links:read', 'links:write'],
      description: 'Short links for <your> team & friends.',
      homepage_url: 'https://app.example/',
      privacy_policy_url: 'https://app.example/privacy',
      terms_url: 'https://app.example/terms',
      narrowed: null,
    })
    // null removes one field; the others stay.
    const cleared = await patch(party.client.id, { terms_url: null })
    expect(cleared.json()).toMatchObject({
      name: 'Renamed App',
      terms_url: null,
      homepage_url: 'https://app.example/',
    })
    const shown = await t.admin.inject({
      method: 'GET',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(shown.json()).toMatchObject({
      name: 'Renamed App',
      terms_url: null,
      description: expect.any(String),
    })
  })

  it.each([
    [{ redirect_uris: ['http://evil.example/cb'] }, 'redirect_uris.0'],
    [{ redirect_uris: [] }, 'redirect_uris'],
    [{ scopes: ['links:read', 'admin:everything'] }, 'scopes.1'],
    [{ scopes: [] }, 'scopes'],
    [{ name: '   ' }, 'name'],
    [{ homepage_url: 'http://app.example/' }, 'homepage_url'],
    [{ privacy_policy_url: 'javascript:alert(1)' }, 'privacy_policy_url'],
    [{ terms_url: 'https://user:pw@app.example/terms' }, 'terms_url'],
    [{ description: 'x'.repeat(301) }, 'description'],
    [{ description: 'two\nlines' }, 'description'],
    [{ description: '' }, 'description'],
  ])('refuses %j with a problem naming %s, and changes nothing', async (body, field) => {
    const party = await createParty(t)
    const res = await patch(party.client.id, body)
    expect(res.statusCode, res.body).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().detail).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `))
    expect(await t.services.clients.getClient(party.client.id)).toEqual(party.client)
  })

  it('refuses an empty patch and a field it does not know (a misspelling is never ignored)', async () => {
    const party = await createParty(t)
    expect((await patch(party.client.id, {})).statusCode).toBe(400)
    const typo = await patch(party.client.id, { redirect_uri: ['https://app.example/other'] })
    expect(typo.statusCode).toBe(400)
    expect(typo.json()).toMatchObject({
      detail: 'redirect_uri: not a field of this request',
      field: 'redirect_uri',
    })
  })

  it('answers 404 for an unknown client and 401 without the admin token', async () => {
    expect((await patch('AAAAAAAAAAAAAAAAAAAAAA', { name: 'x' })).statusCode).toBe(404)
    expect((await patch('not an id', { name: 'x' })).statusCode).toBe(404)
    const party = await createParty(t)
    const res = await t.admin.inject({
      method: 'PATCH',
      url: `/admin/clients/${party.client.id}`,
      payload: { name: 'x' },
    })
    expect(res.statusCode).toBe(401)
  })

  it('a removed redirect URI is refused by the next authorization request, with no redirect', async () => {
    const party = await createParty(t, { redirectUri: 'https://old.example/cb' })
    await patch(party.client.id, { redirect_uris: ['https://new.example/cb'] })
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: party.client.id,
      redirect_uri: 'https://old.example/cb',
      scope: 'links:read',
      code_challenge: s256Challenge('v'.repeat(43)),
      code_challenge_method: 'S256',
    })
    const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}` })
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
  })

  it('a removed scope is refused by the next authorization request', async () => {
    const party = await createParty(t)
    await patch(party.client.id, { scopes: ['links:read'] })
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: party.client.id,
      redirect_uri: party.client.redirectUris[0]!,
      scope: 'links:read links:write',
      code_challenge: s256Challenge('v'.repeat(43)),
    })
    const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}` })
    expect(res.statusCode).toBe(302)
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('invalid_scope')
  })

  it('a consent answered after the scope was removed issues no code for it', async () => {
    const party = await createParty(t)
    await patch(party.client.id, { scopes: ['links:read'] })
    const approve = t.services.grants.approveAndIssueCode({
      userId: party.userId,
      clientId: party.client.id,
      redirectUri: party.client.redirectUris[0]!,
      scopes: ['links:write'],
      codeChallenge: s256Challenge('v'.repeat(43)),
    })
    await expect(approve).rejects.toBeInstanceOf(OAuthError)
    await expect(approve).rejects.toMatchObject({ code: 'invalid_scope' })
  })
})

describe('narrowing a client’s scopes narrows what was granted, at once', () => {
  it('revokes the families holding the removed scope; the refresh token continues with the rest', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    expect(tokens.scope).toBe('links:read links:write')
    const res = await patch(party.client.id, { scopes: ['links:read'] })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().narrowed).toEqual({
      grants_revoked: 0,
      grants_narrowed: 1,
      refresh_families_revoked: 1,
      refresh_families_continued: 1,
      codes_expired: 0,
    })

    // The access token holding the removed scope: refused by introspection and announced on the feed.
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:family-revoked'])
    expect(events[0]!.event.family_id).toBe(jwtClaims(tokens.access_token).family_id)
    expect(revokes(events, tokens.access_token)).toBe(true)

    // The refresh token keeps working and yields only what remains, in a family the feed never named.
    const refreshed = await refresh(party, tokens.refresh_token)
    expect(refreshed.statusCode, refreshed.body).toBe(200)
    const next = refreshed.json()
    expect(next.scope).toBe('links:read')
    expect(jwtClaims(next.access_token).family_id).not.toBe(jwtClaims(tokens.access_token).family_id)
    expect(revokes(events, next.access_token)).toBe(false)
    expect((await introspect(t, rs, next.access_token)).active).toBe(true)
    expect((await refresh(party, next.refresh_token, 'links:write')).json().error).toBe('invalid_scope')
    // The new family is the old one with the remaining scopes: same grant, user, start, expiry, resources.
    const family = (id: unknown) =>
      t.database.db
        .selectFrom('refresh_families')
        .selectAll()
        .where('id', '=', String(id))
        .executeTakeFirstOrThrow()
    const before = await family(jwtClaims(tokens.access_token).family_id)
    const after = await family(jwtClaims(next.access_token).family_id)
    expect(before).toMatchObject({
      revoked_reason: 'client_scopes_narrowed',
      scopes: ['links:read', 'links:write'],
    })
    expect(after).toEqual({
      ...before,
      id: after.id,
      scopes: ['links:read'],
      revoked_at: null,
      revoked_reason: null,
    })
    expect((await t.services.grants.findLiveGrant(party.userId, party.client.id))?.scopes).toEqual([
      'links:read',
    ])
  })

  it('keeps reuse detection: the old refresh token presented again revokes the continued family', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    await patch(party.client.id, { scopes: ['links:read'] })
    const next = (await refresh(party, tokens.refresh_token)).json()
    // Inside REFRESH_REUSE_WINDOW the old token is a retry, answered with the narrowed scopes only.
    const retry = await refresh(party, tokens.refresh_token)
    expect(retry.statusCode).toBe(200)
    expect(retry.json().scope).toBe('links:read')
    clock.advance(t.config.refreshReuseWindow)
    const replay = await refresh(party, tokens.refresh_token)
    expect(replay.json().error).toBe('invalid_grant')
    expect(await introspect(t, rs, retry.json().access_token)).toEqual({ active: false })
    expect(await introspect(t, rs, next.access_token)).toEqual({ active: false })
    expect((await refresh(party, next.refresh_token)).json().error).toBe('invalid_grant')
  })

  it('revokes a grant left with no scope: one grant-revoked event, the refresh token dies', async () => {
    const party = await createParty(t, { grantScopes: ['links:write'] })
    const tokens = await exchangeCode(t, party)
    const res = await patch(party.client.id, { scopes: ['links:read'] })
    expect(res.json().narrowed).toMatchObject({ grants_revoked: 1, grants_narrowed: 0 })
    const events = await newEvents()
    expect(events.map((e) => e.type)).toEqual(['urn:linkauth:event:grant-revoked'])
    expect(revokes(events, tokens.access_token)).toBe(true)
    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect((await refresh(party, tokens.refresh_token)).json().error).toBe('invalid_grant')
    expect(await t.services.grants.findLiveGrant(party.userId, party.client.id)).toBeUndefined()
  })

  it('leaves alone what holds only remaining scopes, and says nothing on the feed', async () => {
    const party = await createParty(t, { grantScopes: ['links:read'] })
    const tokens = await exchangeCode(t, party)
    const res = await patch(party.client.id, { scopes: ['links:read', 'ecommerce:write'] })
    expect(res.json().narrowed).toMatchObject({
      grants_revoked: 0,
      grants_narrowed: 0,
      refresh_families_revoked: 0,
    })
    expect(await newEvents()).toEqual([])
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    expect((await refresh(party, tokens.refresh_token)).statusCode).toBe(200)
  })

  it('expires an unredeemed code for a removed scope or a removed redirect URI', async () => {
    const party = await createParty(t)
    const forScope = await mintCode(t, party, { scopes: ['links:write'] })
    const kept = await mintCode(t, party, { scopes: ['links:read'] })
    const res = await patch(party.client.id, { scopes: ['links:read'] })
    expect(res.json().narrowed.codes_expired).toBe(1)
    const redeem = (code: { code: string; verifier: string }) =>
      tokenRequest(t, {
        grant_type: 'authorization_code',
        code: code.code,
        code_verifier: code.verifier,
        client_id: party.client.id,
      })
    expect((await redeem(forScope)).json().error).toBe('invalid_grant')
    expect((await redeem(kept)).statusCode).toBe(200)

    const forUri = await mintCode(t, party, { scopes: ['links:read'] })
    const moved = await patch(party.client.id, { redirect_uris: ['https://moved.example/cb'] })
    expect(moved.json().narrowed.codes_expired).toBe(1)
    expect((await redeem(forUri)).json().error).toBe('invalid_grant')
  })

  it('is one transaction with the update: a failure leaves the client, grants and tokens as they were', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    // Fails the narrowing's grant update, after the client row and the refresh families were written.
    await sql`create function test_fail_narrowing() returns trigger language plpgsql as $$
      begin raise exception 'injected failure'; end $$`.execute(t.database.db)
    await sql`create trigger test_fail_narrowing before update of scopes on grants
      for each row execute function test_fail_narrowing()`.execute(t.database.db)
    try {
      const res = await patch(party.client.id, { scopes: ['links:read'], name: 'Half Written' })
      expect(res.statusCode).toBeGreaterThanOrEqual(500)
      expect(res.body).not.toContain('injected')
    } finally {
      await sql`drop trigger test_fail_narrowing on grants`.execute(t.database.db)
      await sql`drop function test_fail_narrowing()`.execute(t.database.db)
    }
    expect(await t.services.clients.getClient(party.client.id)).toEqual(party.client)
    expect((await introspect(t, rs, tokens.access_token)).active).toBe(true)
    expect(await newEvents()).toEqual([])
    expect((await refresh(party, tokens.refresh_token)).json().scope).toBe('links:read links:write')
  })
})

describe('POST /admin/clients/:id/enable', () => {
  it('re-enables a disabled client; its old grants and tokens stay revoked', async () => {
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const disabled = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(disabled.json().disabled_at).not.toBeNull()
    const res = await t.admin.inject({
      method: 'POST',
      url: `/admin/clients/${party.client.id}/enable`,
      headers: adminHeaders,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ client_id: party.client.id, disabled_at: null })

    expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
    expect((await refresh(party, tokens.refresh_token)).json().error).toBe('invalid_grant')
    expect(await t.services.grants.findLiveGrant(party.userId, party.client.id)).toBeUndefined()
    expect(await t.services.connectedApps.list(party.userId)).toEqual([])

    // It authorizes again: a new consent makes a new grant, and its tokens work.
    const issued = await t.services.grants.approveAndIssueCode({
      userId: party.userId,
      clientId: party.client.id,
      redirectUri: party.client.redirectUris[0]!,
      scopes: ['links:read'],
      codeChallenge: s256Challenge('w'.repeat(43)),
    })
    expect(issued.grantId).not.toBe(party.grant.id)
    const exchanged = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: issued.code,
      code_verifier: 'w'.repeat(43),
      client_id: party.client.id,
    })
    expect(exchanged.statusCode, exchanged.body).toBe(200)
    expect((await introspect(t, rs, exchanged.json().access_token)).active).toBe(true)
  })

  it('is idempotent on an enabled client and answers 404 for an unknown one', async () => {
    const party = await createParty(t)
    const url = `/admin/clients/${party.client.id}/enable`
    expect(
      (await t.admin.inject({ method: 'POST', url, headers: adminHeaders })).json().disabled_at,
    ).toBeNull()
    const unknown = await t.admin.inject({
      method: 'POST',
      url: '/admin/clients/AAAAAAAAAAAAAAAAAAAAAA/enable',
      headers: adminHeaders,
    })
    expect(unknown.statusCode).toBe(404)
  })
})
