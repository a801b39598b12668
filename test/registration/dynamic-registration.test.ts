import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { CHALLENGE, locationParams, VERIFIER } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { allow, appWithUser, authorizeAndSignIn } from './setup.js'

/** Issue 27 §2: dynamic client registration (RFC 7591) with RFC 7592 read and delete, kept clean. */

const clock = createTestClock(new Date('2026-06-01T10:00:00.000Z'))
let t: TestApp
let email: string
beforeAll(async () => {
  ;({ t, email } = await appWithUser('dcr', { clock, env: { DYNAMIC_REGISTRATION_RATE_LIMIT: '5' } }))
})
afterAll(async () => t.close())

let address = 0
const register = (body: unknown, headers: Record<string, string> = {}, from = `10.9.0.${++address}`) =>
  t.app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    payload: body as object,
    headers,
    remoteAddress: from,
  })

const REDIRECT = 'http://127.0.0.1/callback'

describe('POST /api/oauth/register', () => {
  it('is advertised, registers a public client, answers RFC 7591 §3.2.1, stores the token hashed', async () => {
    const meta = (
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    ).json()
    expect(meta.registration_endpoint).toBe('http://localhost:3000/api/oauth/register')
    const res = await register({
      client_name: 'MCP Agent',
      redirect_uris: [REDIRECT],
      scope: 'links:read openid',
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toMatchObject({
      client_name: 'MCP Agent',
      redirect_uris: [REDIRECT],
      scope: 'links:read',
      token_endpoint_auth_method: 'none',
      registration_client_uri: `http://localhost:3000/api/oauth/register/${body.client_id}`,
    })
    expect(body.registration_access_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const row = await t.database.db
      .selectFrom('clients')
      .selectAll()
      .where('id', '=', body.client_id)
      .executeTakeFirstOrThrow()
    expect(row.kind).toBe('dynamic')
    expect(row.registration_token_hash).not.toBe(body.registration_access_token)
    expect(JSON.stringify(row)).not.toContain(body.registration_access_token)

    const read = await t.app.inject({
      method: 'GET',
      url: `/api/oauth/register/${body.client_id}`,
      headers: { authorization: `Bearer ${body.registration_access_token}` },
    })
    expect(read.statusCode).toBe(200)
    expect(read.json().registration_access_token).toBeUndefined()
    const wrong = await t.app.inject({
      method: 'GET',
      url: `/api/oauth/register/${body.client_id}`,
      headers: { authorization: 'Bearer nope' },
    })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json().error).toBe('invalid_token')
  })

  it('refuses secrets, bad redirect URIs and bad metadata with RFC 7591 §3.2.2 errors', async () => {
    const cases: [unknown, string][] = [
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], client_secret: 'x' }, 'invalid_client_metadata'],
      [
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' },
        'invalid_client_metadata',
      ],
      [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    ]
    for (const [body, error] of cases) {
      const res = await register(body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.json().error).toBe(error)
    }
  })

  it('limits registrations per address', async () => {
    const statuses = []
    for (let i = 0; i < 7; i++)
      statuses.push((await register({ redirect_uris: [REDIRECT] }, {}, '10.8.8.8')).statusCode)
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429])
  })

  it('full flow: consent labelled unverified, tokens; delete (RFC 7592) → invalid_client 401', async () => {
    const reg = (await register({ client_name: 'Agent', redirect_uris: ['https://agent.example/cb'] })).json()
    const { browser, page } = await authorizeAndSignIn(t, email, {
      client_id: reg.client_id,
      redirect_uri: 'https://agent.example/cb',
      scope: 'links:read',
      code_challenge: CHALLENGE,
    })
    expect(page.body).toContain('Unverified application.')
    const answer = await allow(browser, page)
    const token = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: locationParams(answer).code!,
      code_verifier: VERIFIER,
      client_id: reg.client_id,
    })
    expect(token.statusCode).toBe(200)
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/oauth/register/${reg.client_id}`,
      headers: { authorization: `Bearer ${reg.registration_access_token}` },
    })
    expect(del.statusCode).toBe(204)
    const after = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: token.json().refresh_token,
      client_id: reg.client_id,
    })
    expect(after.statusCode).toBe(401)
    expect(after.json().error).toBe('invalid_client')
  })

  it('housekeeping removes registrations unused for DYNAMIC_REGISTRATION_UNUSED_TTL; their id answers invalid_client', async () => {
    const reg = (await register({ redirect_uris: [REDIRECT] })).json()
    clock.advance(7 * 24 * 3600 + 60)
    await t.services.housekeeping.run()
    expect(await t.services.clients.findActiveClient(reg.client_id)).toBeUndefined()
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: 'x'.repeat(43),
      client_id: reg.client_id,
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select('event_type')
      .where('client_id', '=', reg.client_id)
      .execute()
    expect(audit.map((r) => r.event_type).sort()).toEqual([
      'client.registered',
      'client.registration_expired',
    ])
    const metrics = await t.services.metrics.registry.getSingleMetricAsString(
      'linkauth_client_registrations_total',
    )
    expect(metrics).toMatch(/outcome="removed"\} [1-9]/)
  })
})

describe('turned off, or with an initial access token', () => {
  it('off: no endpoint and none advertised; token: refused without the token', async () => {
    const off = await buildTestApp({ database: t.database, env: { DYNAMIC_REGISTRATION: 'off' } })
    expect(
      (await off.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json()
        .registration_endpoint,
    ).toBeUndefined()
    expect(
      (
        await off.app.inject({
          method: 'POST',
          url: '/api/oauth/register',
          payload: { redirect_uris: [REDIRECT] },
        })
      ).statusCode,
    ).toBe(404)
    await off.app.close()
    await off.admin.close()
    const token = 'initial-access-token-0123456789abcdefghij'
    const gated = await buildTestApp({
      database: t.database,
      env: { DYNAMIC_REGISTRATION: 'token', DYNAMIC_REGISTRATION_TOKEN: token },
    })
    const post = (auth?: string) =>
      gated.app.inject({
        method: 'POST',
        url: '/api/oauth/register',
        payload: { redirect_uris: [REDIRECT] },
        headers: auth ? { authorization: auth } : {},
      })
    expect((await post()).statusCode).toBe(401)
    expect((await post('Bearer wrong')).statusCode).toBe(401)
    expect((await post(`Bearer ${token}`)).statusCode).toBe(201)
    await gated.app.close()
    await gated.admin.close()
  })
})
