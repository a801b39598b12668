import { describe, expect, it } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { Browser, PASSWORD, seed } from '../helpers/browser.js'
import { createParty, exchangeCode, mintCode } from '../helpers/fixtures.js'
import {
  t,
  skipUnlessBuilt,
  check,
  uncheckedIn,
  TOKEN,
  REVOKE,
  INTROSPECT,
  form,
  basic,
  useOpenApiApp,
} from './openapi-answers.js'

/**
 * The public listener's answers against its OpenAPI document (see openapi-answers.ts).
 */
useOpenApiApp()

describe('public listener answers match the document', () => {
  it('discovery, keys, health and the document itself', async () => {
    await check(
      'public',
      'GET /.well-known/oauth-authorization-server',
      { url: '/.well-known/oauth-authorization-server' },
      200,
    )
    await check('public', 'GET /.well-known/jwks.json', { url: '/.well-known/jwks.json' }, 200)
    await check('public', 'GET /healthz', { url: '/healthz' }, 200)
    await check('public', 'GET /readyz', { url: '/readyz' }, 200)
    await check('public', 'GET /openapi.json', { url: '/openapi.json' }, 200)
  })

  it('the authorization endpoint refuses an unknown client with a page', async () => {
    await check(
      'public',
      'GET /oauth/authorize',
      { url: '/oauth/authorize?client_id=nobody-here&redirect_uri=https%3A%2F%2Fx.example%2F' },
      400,
    )
  })

  it('the token endpoint: code exchange, refresh, and each error status', async () => {
    const party = await createParty(t)
    const { code, verifier } = await mintCode(t, party)
    const op = 'POST /api/oauth/token'
    const exchanged = await check(
      'public',
      op,
      form(TOKEN, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.client.id,
      }),
      200,
    )
    const refreshToken = exchanged.json().refresh_token as string
    const refreshed = { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: party.client.id }
    await check(
      'public',
      op,
      { url: TOKEN, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(refreshed) },
      200,
    )
    await check('public', op, form(TOKEN, { ...refreshed, refresh_token: 'x'.repeat(43) }), 400) // unknown: invalid_grant
    await check('public', op, form(TOKEN, { client_id: party.client.id }), 400) // no grant_type
    await check('public', op, form(TOKEN, { ...refreshed, client_id: 'no-such-client' }), 401)
    await check(
      'public',
      op,
      { url: TOKEN, headers: { 'content-type': 'text/plain' }, payload: 'code=x' },
      415,
    )
    await check('public', op, form(TOKEN, { code: 'x'.repeat(70 * 1024) }), 413)
  })

  it('revocation', async (ctx) => {
    skipUnlessBuilt(ctx, 'POST /api/oauth/revoke')
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const op = 'POST /api/oauth/revoke'
    await check('public', op, form(REVOKE, { token: tokens.refresh_token, client_id: party.client.id }), 200)
    await check('public', op, form(REVOKE, { token: 'not-a-token-of-ours', client_id: party.client.id }), 200)
    await check('public', op, form(REVOKE, { client_id: party.client.id }), 400)
    await check('public', op, form(REVOKE, { token: tokens.access_token, client_id: 'no-such-client' }), 401)
  })

  it('pushed authorization requests', async (ctx) => {
    skipUnlessBuilt(ctx, 'POST /api/oauth/par')
    const party = await createParty(t)
    const op = 'POST /api/oauth/par'
    const request = {
      client_id: party.client.id,
      redirect_uri: party.client.redirectUris[0]!,
      scope: 'links:read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    }
    await check('public', op, form('/api/oauth/par', request), 201)
    await check('public', op, form('/api/oauth/par', { ...request, scope: 'nope' }), 400)
    await check('public', op, form('/api/oauth/par', { ...request, client_id: 'no-such-client' }), 401)
  })

  it('introspection', async (ctx) => {
    skipUnlessBuilt(ctx, 'POST /api/oauth/introspect')
    const rs = await t.services.resourceServers.createResourceServer({ name: 'Links API' })
    const auth = { authorization: basic(rs.id, rs.secret) }
    const party = await createParty(t)
    const tokens = await exchangeCode(t, party)
    const op = 'POST /api/oauth/introspect'
    const introspect = (token: string, headers: Record<string, string> = auth) => {
      const f = form(INTROSPECT, { token })
      return { ...f, headers: { ...f.headers, ...headers } }
    }
    const access = await check('public', op, introspect(tokens.access_token), 200)
    expect(access.json()).toMatchObject({ active: true, client_id: party.client.id, sub: party.userId })
    const refresh = await check('public', op, introspect(tokens.refresh_token), 200)
    expect(refresh.json()).toEqual({ active: false })
    const unknown = await check('public', op, introspect('garbage'), 200)
    expect(unknown.json()).toEqual({ active: false })
    const refused = await check(
      'public',
      op,
      introspect(tokens.access_token, { authorization: basic(rs.id, 'wrong') }),
      401,
    )
    expect(refused.headers['www-authenticate']).toMatch(/^Basic/)
  })

  it('the revocation event feed', async () => {
    const rs = await t.services.resourceServers.createResourceServer({ name: 'Links API' })
    const headers = { authorization: basic(rs.id, rs.secret), 'content-type': 'application/json' }
    const create = 'POST /api/events/streams'
    const created = await check('public', create, { url: '/api/events/streams', headers }, 201)
    await check('public', create, { url: '/api/events/streams', headers, payload: '[]' }, 400)
    await check('public', create, { url: '/api/events/streams', headers: {} }, 401)
    await check(
      'public',
      create,
      { url: '/api/events/streams', headers: { ...headers, 'content-type': 'text/plain' }, payload: 'x' },
      415,
    )

    const party = await createParty(t)
    await t.services.connectedApps.revoke(party.userId, party.client.id)
    const op = 'POST /api/events/streams/{stream_id}/poll'
    const url = `/api/events/streams/${created.json().stream_id}/poll`
    const poll = (payload: object) => ({ url, headers, payload: JSON.stringify(payload) })
    const page = await check('public', op, poll({ returnImmediately: true }), 200)
    expect(Object.keys(page.json().sets).length).toBeGreaterThan(0)
    await check('public', op, poll({ maxEvents: -1 }), 400)
    await check('public', op, { url, headers: { authorization: basic(rs.id, 'wrong') } }, 401)
    await check('public', op, { ...poll({}), url: '/api/events/streams/no-such-stream/poll' }, 404)
    await check(
      'public',
      op,
      { url, headers: { ...headers, 'content-type': 'text/plain' }, payload: 'x' },
      415,
    )
  })

  it('the account area JSON API', async (ctx) => {
    skipUnlessBuilt(ctx, 'GET /api/account/apps')
    const s = await seed(t)
    await upsertGrant(
      t.database.db,
      { userId: s.user.id, clientId: s.client.id, scopes: ['links:read'] },
      new Date(),
    )
    const party = await createParty(t)
    const browser = new Browser(t.app)
    await browser.signIn(s.email, PASSWORD)
    const cookie = { cookie: browser.jar.header() }
    await check('public', 'GET /api/account/apps', { url: '/api/account/apps' }, 401)
    const list = await check(
      'public',
      'GET /api/account/apps',
      { url: '/api/account/apps', headers: cookie },
      200,
    )
    expect(list.json().apps).toHaveLength(1)
    const csrf = list.json().csrf_token as string
    const op = 'DELETE /api/account/apps/{client_id}'
    const url = `/api/account/apps/${party.client.id}`
    await check('public', op, { url, headers: cookie }, 403)
    await check('public', op, { url, headers: { ...cookie, 'x-csrf-token': csrf } }, 404)
    const own = `/api/account/apps/${s.client.id}`
    await check('public', op, { url: own, headers: { ...cookie, 'x-csrf-token': csrf } }, 204)
  })
})

describe('the device authorization endpoint matches the document', () => {
  it('answers the codes, and each error status', async () => {
    const op = 'POST /api/oauth/device_authorization'
    const url = '/api/oauth/device_authorization'
    const device = await t.services.clients.createClient({
      name: 'Device App',
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
    })
    const started = await check('public', op, form(url, { client_id: device.id, scope: 'links:read' }), 200)
    await check('public', op, form(url, { client_id: device.id, scope: 'nope' }), 400)
    await check('public', op, form(url, { client_id: 'nobody-here-at-all' }), 401)
    await check('public', op, { url, headers: { 'content-type': 'text/plain' }, payload: 'x' }, 415)
    // The poll's errors are the token endpoint's (RFC 8628 §3.5).
    await check(
      'public',
      'POST /api/oauth/token',
      form(TOKEN, {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: started.json().device_code as string,
        client_id: device.id,
      }),
      400,
    )
  })
})

describe('dynamic registration matches the document', () => {
  it('registers, reads, deletes, refuses', async () => {
    const url = '/api/oauth/register'
    const created = await check(
      'public',
      'POST /api/oauth/register',
      { url, payload: { client_name: 'Doc Agent', redirect_uris: ['http://127.0.0.1/cb'] } },
      201,
    )
    await check(
      'public',
      'POST /api/oauth/register',
      { url, payload: { redirect_uris: ['http://x.example/'] } },
      400,
    )
    const { client_id, registration_access_token } = created.json() as Record<string, string>
    const at = `${url}/${client_id}`
    const auth = { authorization: `Bearer ${registration_access_token}` }
    await check('public', 'GET /api/oauth/register/{client_id}', { url: at, headers: auth }, 200)
    await check('public', 'GET /api/oauth/register/{client_id}', { url: at }, 401)
    await check('public', 'DELETE /api/oauth/register/{client_id}', { url: at, headers: auth }, 204)
    await check('public', 'DELETE /api/oauth/register/{client_id}', { url: at, headers: auth }, 401)
  })
})

describe('coverage', () => {
  it('every documented public operation (passkeys aside) that exists was checked against a real answer above', () => {
    expect(uncheckedIn('public')).toEqual([])
  })
})
