import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { cliAgainst } from '../helpers/cli.js'
import { authorizeUrl, Browser, locationParams, PASSWORD, REDIRECT_URI, seed } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'

/**
 * Pushed authorization requests (RFC 9126) at the edges, on a fixed clock: the PAR endpoint's JSON
 * errors, single use, expiry, a request_uri of another client, the requirement (operator-wide and
 * per client, the one-statement path of a returning user included), storage and housekeeping.
 */

const clock = createTestClock(new Date('2026-03-01T10:00:00.000Z'))
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ clock, env: GENEROUS_LIMITS })
})
afterAll(async () => t.close())

type Seeded = Awaited<ReturnType<typeof seed>>

const par = (app: TestApp, params: Record<string, string | string[]>, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url: '/api/oauth/par',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(
      Object.entries(params).flatMap(([k, v]) => [v].flat().map((one): [string, string] => [k, one])),
    ).toString(),
  })

async function pushed(app: TestApp, s: Seeded, extra: Record<string, string> = {}): Promise<string> {
  const res = await par(app, { ...s.params, ...extra })
  expect(res.statusCode, res.body).toBe(201)
  expect(res.headers['cache-control']).toBe('no-store')
  return res.json().request_uri
}

const withUri = (clientId: string, requestUri: string) =>
  authorizeUrl({ client_id: clientId, request_uri: requestUri })

/** A browser signed in as the seeded user, who approved the client before (a live grant). */
async function returningUser(app: TestApp, s: Seeded): Promise<Browser> {
  await upsertGrant(
    app.database.db,
    { userId: s.user.id, clientId: s.client.id, scopes: ['links:read', 'links:write'] },
    app.clock.now(),
  )
  const browser = new Browser(app.app)
  expect((await browser.signIn(s.email, PASSWORD)).statusCode).toBe(303)
  return browser
}

describe('POST /api/oauth/par', () => {
  it('answers 201 with a request_uri and expires_in; stores only the hash of its handle', async () => {
    const s = await seed(t)
    const res = await par(t, s.params)
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['expires_in', 'request_uri'])
    expect(body.expires_in).toBe(60)
    const handle = body.request_uri.slice('urn:ietf:params:oauth:request_uri:'.length)
    const rows = await t.database.db
      .selectFrom('pushed_authorization_requests')
      .selectAll()
      .where('client_id', '=', s.client.id)
      .execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.handle_hash).toBe(sha256(handle))
    expect(JSON.stringify(rows[0])).not.toContain(handle)
    expect(rows[0]!.expires_at.getTime() - clock.now().getTime()).toBe(60_000)
  })

  it('refuses what the authorization endpoint refuses, as JSON errors (nothing is redirected)', async () => {
    const s = await seed(t, { scopes: ['links:read'] })
    const cases: [Record<string, string | string[]>, number, string][] = [
      [{ ...s.params, client_id: 'no-such-client' }, 401, 'invalid_client'],
      [{ ...s.params, client_secret: 'a-secret' }, 401, 'invalid_client'],
      [{ ...s.params, client_id: '' }, 400, 'invalid_request'],
      [{ ...s.params, redirect_uri: 'https://attacker.example/cb' }, 400, 'invalid_request'],
      [{ ...s.params, redirect_uri: '' }, 400, 'invalid_request'],
      [{ ...s.params, request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 400, 'invalid_request'],
      [{ ...s.params, code_challenge: '' }, 400, 'invalid_request'],
      [{ ...s.params, code_challenge_method: 'plain' }, 400, 'invalid_request'],
      [{ ...s.params, response_type: 'token' }, 400, 'unsupported_response_type'],
      [{ ...s.params, scope: 'links:read links:write' }, 400, 'invalid_scope'],
      [{ ...s.params, scope: 'links:read', state: ['a', 'b'] }, 400, 'invalid_request'],
      [{ ...s.params, scope: 'links:read', resource: 'https://unknown.example/api' }, 400, 'invalid_target'],
      [{ ...s.params, scope: 'links:read', dpop_jkt: 'short' }, 400, 'invalid_request'],
    ]
    for (const [params, status, error] of cases) {
      const res = await par(t, params)
      expect([res.statusCode, res.json().error], JSON.stringify(params)).toEqual([status, error])
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      expect(res.headers.location).toBeUndefined()
    }
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/par',
      headers: { 'content-type': 'application/json' },
      payload: { ...s.params, scope: 'links:read', state: 7 },
    })
    expect([json.statusCode, json.json().error]).toEqual([400, 'invalid_request'])
    const text = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/par',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
    })
    expect(text.statusCode).toBe(415)
  })

  it('accepts client_id in HTTP Basic with an empty password, and a JSON body', async () => {
    const s = await seed(t)
    const { client_id: clientId, ...rest } = s.params
    const basic = await par(t, rest, {
      authorization: `Basic ${Buffer.from(`${clientId}:`).toString('base64')}`,
    })
    expect(basic.statusCode, basic.body).toBe(201)
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/par',
      headers: { 'content-type': 'application/json' },
      payload: s.params,
    })
    expect(json.statusCode, json.body).toBe(201)
  })
})

describe('GET /oauth/authorize with a request_uri', () => {
  it('uses the pushed parameters once; a replay is an error page', async () => {
    const s = await seed(t)
    const requestUri = await pushed(t, s)
    const browser = await returningUser(t, s)
    const first = await browser.get(withUri(s.client.id, requestUri))
    expect(first.statusCode).toBe(302)
    const back = locationParams(first)
    expect(back.code).toBeTruthy()
    expect(back.state).toBe(s.params.state)
    expect(first.headers.location).toMatch(new RegExp(`^${REDIRECT_URI}\\?`))
    const replay = await browser.get(withUri(s.client.id, requestUri))
    expect(replay.statusCode).toBe(400)
    expect(replay.headers.location).toBeUndefined()
    expect(replay.headers['content-type']).toMatch(/^text\/html/)
  })

  it('expires: one second past PAR_TTL it is an error page', async () => {
    const s = await seed(t)
    const requestUri = await pushed(t, s)
    const browser = await returningUser(t, s)
    clock.advance(61)
    const late = await browser.get(withUri(s.client.id, requestUri))
    expect(late.statusCode).toBe(400)
    expect(late.headers.location).toBeUndefined()
    // Just before: still good.
    const fresh = await pushed(t, s)
    clock.advance(59)
    expect((await browser.get(withUri(s.client.id, fresh))).statusCode).toBe(302)
  })

  it('is bound to the client: another client’s request_uri is an error page and stays usable by its own', async () => {
    const s = await seed(t)
    const other = await seed(t)
    const requestUri = await pushed(t, s)
    const browser = await returningUser(t, other)
    const stolen = await browser.get(withUri(other.client.id, requestUri))
    expect(stolen.statusCode).toBe(400)
    expect(stolen.headers.location).toBeUndefined()
    const own = await (await returningUser(t, s)).get(withUri(s.client.id, requestUri))
    expect(own.statusCode).toBe(302)
    expect(locationParams(own).code).toBeTruthy()
  })

  it('refuses unknown, malformed and repeated values with a page, never a redirect', async () => {
    const s = await seed(t)
    const requestUri = await pushed(t, s)
    for (const url of [
      withUri(s.client.id, 'urn:ietf:params:oauth:request_uri:' + 'A'.repeat(43)),
      withUri(s.client.id, 'https://app.example/request.jwt'),
      withUri(s.client.id, ''),
      `/oauth/authorize?request_uri=${encodeURIComponent(requestUri)}`,
      `/oauth/authorize?client_id=${s.client.id}&client_id=x&request_uri=${encodeURIComponent(requestUri)}`,
      `${withUri(s.client.id, requestUri)}&request_uri=x`,
    ]) {
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(400)
      expect(res.headers.location, url).toBeUndefined()
    }
  })

  it('a client disabled since the push gets no code', async () => {
    const s = await seed(t)
    const requestUri = await pushed(t, s)
    const browser = await returningUser(t, s)
    await t.database.db
      .updateTable('clients')
      .set({ disabled_at: clock.now() })
      .where('id', '=', s.client.id)
      .execute()
    const res = await browser.get(withUri(s.client.id, requestUri))
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
  })
})

describe('the requirement to push', () => {
  it('per client: a plain request is invalid_request at the redirect URI, a returning user’s too; PAR works', async () => {
    const s = await seed(t)
    await t.database.db
      .updateTable('clients')
      .set({ require_par: true })
      .where('id', '=', s.client.id)
      .execute()
    const browser = await returningUser(t, s)
    const plain = await browser.get(authorizeUrl(s.params))
    expect(plain.statusCode).toBe(302)
    expect(locationParams(plain)).toMatchObject({ error: 'invalid_request', state: s.params.state })
    const anonymous = await t.app.inject({ method: 'GET', url: authorizeUrl(s.params) })
    expect(locationParams(anonymous).error).toBe('invalid_request')
    const viaPar = await browser.get(withUri(s.client.id, await pushed(t, s)))
    expect(locationParams(viaPar).code).toBeTruthy()
    // Another client is not concerned.
    const other = await seed(t)
    expect(
      locationParams(await (await returningUser(t, other)).get(authorizeUrl(other.params))).code,
    ).toBeTruthy()
  })

  it('operator-wide (REQUIRE_PAR): announced, every plain request refused, pushed ones served', async () => {
    const strict = await buildTestApp({
      clock,
      env: { ...GENEROUS_LIMITS, REQUIRE_PAR: 'true', PAR_TTL: '30' },
    })
    try {
      const metadata = (await strict.app.inject({ url: '/.well-known/oauth-authorization-server' })).json()
      expect(metadata.require_pushed_authorization_requests).toBe(true)
      expect(metadata.pushed_authorization_request_endpoint).toBe(`${strict.config.issuer}/api/oauth/par`)
      const s = await seed(strict)
      const browser = await returningUser(strict, s)
      const plain = await browser.get(authorizeUrl(s.params))
      expect(locationParams(plain)).toMatchObject({ error: 'invalid_request', state: s.params.state })
      // An unregistered redirect_uri is still a page, never a redirect.
      const elsewhere = await browser.get(
        authorizeUrl({ ...s.params, redirect_uri: 'https://attacker.example/cb' }),
      )
      expect(elsewhere.statusCode).toBe(400)
      expect(elsewhere.headers.location).toBeUndefined()
      const res = await par(strict, s.params)
      expect(res.json().expires_in).toBe(30)
      const viaPar = await browser.get(withUri(s.client.id, res.json().request_uri))
      expect(locationParams(viaPar).code).toBeTruthy()
    } finally {
      await strict.close()
    }
  })
})

describe('the per-client requirement, as the operator and the client itself set it', () => {
  /** A plain authorization request of the client, and whether it was refused for not being pushed. */
  async function plainIsRefused(clientId: string, redirectUri = REDIRECT_URI): Promise<boolean> {
    const res = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'links:read',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      }),
    })
    if (res.statusCode === 302 && locationParams(res).error === 'invalid_request') return true
    expect(res.statusCode).toBe(303) // to sign-in: accepted
    return false
  }

  const createClient = (requirement: unknown) =>
    t.admin.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: adminHeaders,
      payload: {
        name: 'PAR App',
        redirect_uris: [REDIRECT_URI],
        require_pushed_authorization_requests: requirement,
      },
    })

  it('admin API: set at creation, shown, changed by PATCH; a non-boolean is refused', async () => {
    const created = await createClient(true)
    expect(created.statusCode).toBe(201)
    const id = created.json().client_id
    expect(created.json().require_pushed_authorization_requests).toBe(true)
    expect(await plainIsRefused(id)).toBe(true)
    const patched = await t.admin.inject({
      method: 'PATCH',
      url: `/admin/clients/${id}`,
      headers: adminHeaders,
      payload: { require_pushed_authorization_requests: false },
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json().require_pushed_authorization_requests).toBe(false)
    expect(await plainIsRefused(id)).toBe(false)
    const bad = await createClient('yes')
    expect(bad.statusCode).toBe(400)
  })

  it('CLI: clients create --require-par', async () => {
    const adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
    const run = await cliAgainst(() => adminUrl)([
      'clients',
      'create',
      '--name',
      'PAR CLI App',
      '--redirect-uri',
      REDIRECT_URI,
      '--require-par',
      '--json',
    ])
    expect(run.code, run.err).toBe(0)
    const created = JSON.parse(run.out)
    expect(created.require_pushed_authorization_requests).toBe(true)
    expect(await plainIsRefused(created.client_id)).toBe(true)
  })

  it('dynamic registration: the RFC 9126 §6 client metadata', async () => {
    const register = (body: object) =>
      t.app.inject({ method: 'POST', url: '/api/oauth/register', payload: body })
    const required = await register({
      redirect_uris: [REDIRECT_URI],
      require_pushed_authorization_requests: true,
    })
    expect(required.statusCode, required.body).toBe(201)
    expect(required.json().require_pushed_authorization_requests).toBe(true)
    expect(await plainIsRefused(required.json().client_id)).toBe(true)
    const plain = await register({ redirect_uris: [REDIRECT_URI] })
    expect(plain.json().require_pushed_authorization_requests).toBeUndefined()
    expect(await plainIsRefused(plain.json().client_id)).toBe(false)
    const bad = await register({
      redirect_uris: [REDIRECT_URI],
      require_pushed_authorization_requests: 'true',
    })
    expect([bad.statusCode, bad.json().error]).toEqual([400, 'invalid_client_metadata'])
  })
})

describe('housekeeping', () => {
  it('deletes expired pushed requests and keeps live ones', async () => {
    const s = await seed(t)
    await pushed(t, s)
    clock.advance(120)
    const live = await pushed(t, s)
    await t.services.housekeeping.run()
    const left = await t.database.db
      .selectFrom('pushed_authorization_requests')
      .select('handle_hash')
      .where('client_id', '=', s.client.id)
      .execute()
    expect(left.map((r) => r.handle_hash)).toEqual([
      sha256(live.slice('urn:ietf:params:oauth:request_uri:'.length)),
    ])
  })
})
