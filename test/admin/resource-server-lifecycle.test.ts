import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createResourceServerService } from '../../src/resource-servers/resource-server.service.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createStream, drain, pollRequest } from '../helpers/events.js'
import { createParty, exchangeCode, jwtClaims, type Party, tokenRequest } from '../helpers/fixtures.js'
import { basicAuth, introspectRequest, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Resource servers after registration: show, update, disable and enable, delete, and secret rotation
 * with an overlap on the test clock.
 */
let t: TestApp
let clock: TestClock
beforeAll(async () => {
  clock = createTestClock(new Date('2026-03-01T10:00:00Z'))
  t = await buildTestApp({ clock })
})
afterAll(async () => t.close())

let seq = 0
const admin = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
  t.admin.inject({
    method,
    url,
    headers: adminHeaders,
    ...(payload === undefined ? {} : { payload: payload as object }),
  })

async function register(withResource = true) {
  const n = ++seq
  const res = await admin('POST', '/admin/resource-servers', {
    name: `API ${n}`,
    ...(withResource ? { resource: `https://api${n}.lifecycle.example/`, scopes: ['links:read'] } : {}),
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json() as { id: string; secret: string; resource: string | null; name: string }
}

/** Introspection's status for these credentials (401: refused), asking about any token. */
const introspectionStatus = async (rs: ResourceServerCredentials) =>
  (await introspectRequest(t, { token: 'x' }, basicAuth(rs.id, rs.secret))).statusCode

/** A user's authorization for the API's resource, exchanged: a family whose resources name it. */
async function tokensFor(party: Party, resource: string) {
  const verifier = 'r'.repeat(43)
  const issued = await t.services.grants.approveAndIssueCode({
    userId: party.userId,
    clientId: party.client.id,
    redirectUri: party.client.redirectUris[0]!,
    scopes: ['links:read'],
    codeChallenge: s256Challenge(verifier),
    resources: [resource],
  })
  const res = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: issued.code,
    code_verifier: verifier,
    client_id: party.client.id,
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as { access_token: string; refresh_token: string }
}

describe('show, list and update', () => {
  it('shows one without its secret, and 404 for an unknown id', async () => {
    const rs = await register()
    const shown = await admin('GET', `/admin/resource-servers/${rs.id}`)
    expect(shown.statusCode).toBe(200)
    expect(shown.json()).toMatchObject({
      id: rs.id,
      name: rs.name,
      disabled_at: null,
      previous_secret_expires_at: null,
    })
    expect(shown.body).not.toContain(rs.secret)
    expect((await admin('GET', '/admin/resource-servers/rs_unknown00000000')).statusCode).toBe(404)
    expect((await admin('GET', '/admin/resource-servers/not%20an%20id')).statusCode).toBe(404)
  })

  it('renames it and changes its scopes; only the fields given', async () => {
    const rs = await register()
    const res = await admin('PATCH', `/admin/resource-servers/${rs.id}`, {
      scopes: ['links:write', 'links:read'],
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      name: rs.name,
      resource: rs.resource,
      scopes: ['links:read', 'links:write'],
    })
    const renamed = await admin('PATCH', `/admin/resource-servers/${rs.id}`, { name: 'Links API v2' })
    expect(renamed.json()).toMatchObject({ name: 'Links API v2', scopes: ['links:read', 'links:write'] })
    expect((await t.services.resourceServers.findTargets([rs.resource!])).get(rs.resource!)).toMatchObject({
      name: 'Links API v2',
      scopes: ['links:read', 'links:write'],
    })
  })

  it.each([
    [{}, undefined],
    [{ name: '' }, 'name'],
    [{ scopes: ['nope'] }, 'scopes.0'],
    [{ scopes: [] }, 'scopes'],
    [{ resource: 'https://other.example/' }, undefined],
  ])('refuses %j (400, naming %s)', async (body, field) => {
    const rs = await register()
    const res = await admin('PATCH', `/admin/resource-servers/${rs.id}`, body)
    expect(res.statusCode).toBe(400)
    if (field) expect(res.json().detail).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `))
  })

  it('refuses scopes for one without a resource, and 404 for an unknown one', async () => {
    const legacy = await register(false)
    const res = await admin('PATCH', `/admin/resource-servers/${legacy.id}`, { scopes: ['links:read'] })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toMatch(/^scopes: /)
    expect(
      (await admin('PATCH', '/admin/resource-servers/rs_unknown00000000', { name: 'x' })).statusCode,
    ).toBe(404)
  })
})

describe('disable and enable', () => {
  it('a disabled resource server gets 401 on introspection and the event feed at once; enabled, it works again', async () => {
    const rs = await register()
    const stream = await createStream(t, rs)
    expect(await introspectionStatus(rs)).toBe(200)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(200)

    const disabled = await admin('POST', `/admin/resource-servers/${rs.id}/disable`)
    expect(disabled.statusCode).toBe(200)
    expect(disabled.json().disabled_at).toBe(clock.now().toISOString())

    const refused = await introspectRequest(t, { token: 'x' }, basicAuth(rs.id, rs.secret))
    expect(refused.statusCode).toBe(401)
    expect(refused.json().error).toBe('invalid_client')
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(401)
    const newStream = await t.app.inject({
      method: 'POST',
      url: '/api/events/streams',
      headers: { authorization: basicAuth(rs.id, rs.secret) },
    })
    expect(newStream.statusCode).toBe(401)

    const enabled = await admin('POST', `/admin/resource-servers/${rs.id}/enable`)
    expect(enabled.json().disabled_at).toBeNull()
    expect(await introspectionStatus(rs)).toBe(200)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(200)
  })

  it('leaves protected_resources and stops being a token target at once; comes back when enabled', async () => {
    const rs = await register()
    const metadata = async () =>
      (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json()
        .protected_resources as string[]
    expect(await metadata()).toContain(rs.resource)
    const party = await createParty(t)
    const tokens = await tokensFor(party, rs.resource!)
    const forApi = (refreshToken: string) =>
      tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: party.client.id,
        resource: rs.resource!,
      })

    await admin('POST', `/admin/resource-servers/${rs.id}/disable`)
    expect(await metadata()).not.toContain(rs.resource)
    const refused = await forApi(tokens.refresh_token)
    expect(refused.json().error).toBe('invalid_target')

    await admin('POST', `/admin/resource-servers/${rs.id}/enable`)
    expect(await metadata()).toContain(rs.resource)
    const served = await forApi(tokens.refresh_token)
    expect(served.statusCode, served.body).toBe(200)
    expect(jwtClaims(served.json().access_token).aud).toBe(rs.resource)
  })

  it('is idempotent (disabling twice keeps the first time) and answers 404 for an unknown id', async () => {
    const rs = await register()
    const first = (await admin('POST', `/admin/resource-servers/${rs.id}/disable`)).json().disabled_at
    clock.advance(60)
    expect((await admin('POST', `/admin/resource-servers/${rs.id}/disable`)).json().disabled_at).toBe(first)
    for (const action of ['disable', 'enable'])
      expect((await admin('POST', `/admin/resource-servers/rs_unknown00000000/${action}`)).statusCode).toBe(
        404,
      )
  })
})

describe('rotating the secret', () => {
  it('returns the new secret once; the old one works during the overlap (default 1 h) and not after', async () => {
    const rs = await register()
    const res = await admin('POST', `/admin/resource-servers/${rs.id}/secret`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const rotated = res.json()
    expect(rotated.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(rotated.secret).not.toBe(rs.secret)
    expect(rotated.previous_secret_expires_at).toBe(new Date(clock.now().getTime() + 3600_000).toISOString())
    expect((await admin('GET', `/admin/resource-servers/${rs.id}`)).body).not.toContain(rotated.secret)

    // Stored hashed, both of them.
    const row = await t.database.db
      .selectFrom('resource_servers')
      .select(['secret_hash', 'previous_secret_hash'])
      .where('id', '=', rs.id)
      .executeTakeFirstOrThrow()
    expect(row).toEqual({ secret_hash: sha256(rotated.secret), previous_secret_hash: sha256(rs.secret) })

    const old = { id: rs.id, secret: rs.secret }
    const current = { id: rs.id, secret: rotated.secret }
    expect(await introspectionStatus(current)).toBe(200)
    expect(await introspectionStatus(old)).toBe(200)
    clock.advance(3599)
    expect(await introspectionStatus(old)).toBe(200)
    clock.advance(1)
    expect(await introspectionStatus(old)).toBe(401)
    expect(await introspectionStatus(current)).toBe(200)
  })

  it('with overlap_seconds 0 the old secret stops at once, on introspection and the feed', async () => {
    const rs = await register()
    const stream = await createStream(t, rs)
    expect(await introspectionStatus(rs)).toBe(200) // now cached on this instance
    const rotated = (
      await admin('POST', `/admin/resource-servers/${rs.id}/secret`, { overlap_seconds: 0 })
    ).json()
    expect(rotated.previous_secret_expires_at).toBeNull()
    expect(await introspectionStatus(rs)).toBe(401)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(401)
    expect((await pollRequest(t, { id: rs.id, secret: rotated.secret }, stream)).statusCode).toBe(200)
  })

  it('a custom overlap; a second rotation ends the first one’s old secret', async () => {
    const rs = await register()
    const first = (
      await admin('POST', `/admin/resource-servers/${rs.id}/secret`, { overlap_seconds: 120 })
    ).json()
    clock.advance(119)
    expect(await introspectionStatus(rs)).toBe(200)
    const second = (
      await admin('POST', `/admin/resource-servers/${rs.id}/secret`, { overlap_seconds: 120 })
    ).json()
    expect(await introspectionStatus(rs)).toBe(401)
    expect(await introspectionStatus({ id: rs.id, secret: first.secret })).toBe(200)
    expect(await introspectionStatus({ id: rs.id, secret: second.secret })).toBe(200)
  })

  it('another instance that cached the old credentials takes the new secret at once', async () => {
    const rs = await register()
    const other = createResourceServerService(t.database.db, t.config, clock, t.services.grants)
    expect(await other.authenticate(rs.id, rs.secret)).toBeDefined() // cached there
    const rotated = (await admin('POST', `/admin/resource-servers/${rs.id}/secret`)).json()
    expect(await other.authenticate(rs.id, rotated.secret)).toEqual({ id: rs.id, resource: rs.resource })
    expect(await other.authenticate(rs.id, rs.secret)).toEqual({ id: rs.id, resource: rs.resource })
    expect(await other.authenticate(rs.id, 'not the secret')).toBeUndefined()
  })

  it.each([
    [{ overlap_seconds: -1 }],
    [{ overlap_seconds: 604801 }],
    [{ overlap_seconds: 1.5 }],
    [{ overlap_seconds: '60' }],
    [{ overlap: 60 }],
  ])('refuses %j and keeps the secret', async (body) => {
    const rs = await register()
    const res = await admin('POST', `/admin/resource-servers/${rs.id}/secret`, body)
    expect(res.statusCode).toBe(400)
    expect(await introspectionStatus(rs)).toBe(200)
    expect(res.body).not.toMatch(/[A-Za-z0-9_-]{43}/)
  })

  it('answers 404 for an unknown id', async () => {
    expect((await admin('POST', '/admin/resource-servers/rs_unknown00000000/secret')).statusCode).toBe(404)
  })
})

describe('delete', () => {
  it('revokes the families that named its resource (announced), grants forget it, re-registering revives nothing', async () => {
    const rs = await register()
    const watcher = await register()
    const watcherStream = await createStream(t, watcher)
    await drain(t, watcher, watcherStream)
    const party = await createParty(t)
    const tokens = await tokensFor(party, rs.resource!)
    const other = await exchangeCode(t, party) // default audience: untouched

    const res = await admin('DELETE', `/admin/resource-servers/${rs.id}`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().deleted).toEqual({ refresh_families_revoked: 1, grants_narrowed: 1, codes_expired: 0 })
    expect(await introspectionStatus(rs)).toBe(401)
    expect((await admin('GET', `/admin/resource-servers/${rs.id}`)).statusCode).toBe(404)

    const events = await drain(t, watcher, watcherStream)
    expect(events.map((e) => [e.type, e.event.family_id])).toEqual([
      ['urn:linkauth:event:family-revoked', jwtClaims(tokens.access_token).family_id],
    ])
    expect((await t.services.grants.findLiveGrant(party.userId, party.client.id))?.resources).toEqual([])

    const refresh = (token: string) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id })
    expect((await refresh(tokens.refresh_token)).json().error).toBe('invalid_grant')
    expect((await refresh(other.refresh_token)).statusCode).toBe(200)

    // The identifier can be registered again; nothing granted for the old one comes back.
    const again = await admin('POST', '/admin/resource-servers', {
      name: 'Reborn',
      resource: rs.resource,
      scopes: ['links:read'],
    })
    expect(again.statusCode).toBe(201)
    expect((await refresh(tokens.refresh_token)).json().error).toBe('invalid_grant')
  })

  it('deletes one without a resource, and answers 404 the second time', async () => {
    const legacy = await register(false)
    const res = await admin('DELETE', `/admin/resource-servers/${legacy.id}`)
    expect(res.json().deleted).toEqual({ refresh_families_revoked: 0, grants_narrowed: 0, codes_expired: 0 })
    expect((await admin('DELETE', `/admin/resource-servers/${legacy.id}`)).statusCode).toBe(404)
  })
})
