import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomToken } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, seed } from '../helpers/browser.js'
import { rateLimitedCount } from '../helpers/rate-limit.js'
import { createTestClock } from '../helpers/clock.js'
import { createParty, type Party, tokenRequest as postToken } from '../helpers/fixtures.js'
import { checkResponse, createValidator, type OpenApiDocument } from '../helpers/openapi.js'
import { basicAuth, createResourceServer, type ResourceServerCredentials } from '../helpers/tokens.js'

// Explicit small limits (the defaults are documented and checked in docs/operating.md), the memory
// store, and a test clock to end the minute.
const clock = createTestClock(new Date('2026-04-02T09:00:00.000Z'))
let t: TestApp
let party: Party
let rs: ResourceServerCredentials
let openApi: OpenApiDocument
const ajv = createValidator()
beforeAll(async () => {
  t = await buildTestApp({
    clock,
    env: {
      TOKEN_RATE_LIMIT: '5',
      REVOCATION_RATE_LIMIT: '3',
      INTROSPECTION_RATE_LIMIT: '4',
      UNIDENTIFIED_RATE_LIMIT: '3',
      AUTHORIZE_RATE_LIMIT: '3',
    },
  })
  party = await createParty(t)
  rs = await createResourceServer(t)
  openApi = (await t.app.inject({ url: '/openapi.json' })).json()
})
afterAll(async () => t.close())

let addressCounter = 0
const newAddress = () => `192.0.2.${++addressCounter}`

function post(
  url: string,
  address: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
  })
}
/** A token request the server must look at and refuse (400 invalid_grant): it still counts. */
const tokenRequest = (address: string, clientId = party.client.id, headers: Record<string, string> = {}) =>
  post(
    '/api/oauth/token',
    address,
    { grant_type: 'refresh_token', refresh_token: randomToken(), client_id: clientId },
    headers,
  )

/** The 429 every OAuth endpoint answers: RFC 6749-shaped JSON, Retry-After, never cached. */
function expectOAuth429(res: LightMyRequestResponse, maxWait = 60) {
  expect(res.statusCode).toBe(429)
  // As the OpenAPI document says, for whichever endpoint answered.
  expect(checkResponse(openApi, ajv, `POST ${res.raw.req.url}`, res)).toEqual([])
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(res.headers['cache-control']).toBe('no-store')
  const wait = Number(res.headers['retry-after'])
  expect(wait).toBeGreaterThan(0)
  expect(wait).toBeLessThanOrEqual(maxWait)
  expect(res.json()).toEqual({
    error: 'temporarily_unavailable',
    error_description: `Too many requests. Retry after ${wait} seconds.`,
  })
}

describe('token endpoint: TOKEN_RATE_LIMIT per (client_id, address) a minute', () => {
  it('the 6th request of a minute gets 429 JSON with Retry-After, until the minute ends', async () => {
    const address = newAddress()
    for (let i = 0; i < 5; i++) expect((await tokenRequest(address)).statusCode).toBe(400)
    const before = await rateLimitedCount(t, 'token')
    const refused = await tokenRequest(address)
    expectOAuth429(refused)
    expect(Number(refused.headers['retry-after'])).toBe(60) // the test clock has not moved
    expect(await rateLimitedCount(t, 'token')).toBe(before + 1)
    clock.advance(60)
    expect((await tokenRequest(address)).statusCode).toBe(400)
  })

  it('nobody can spend a client’s quota from another address', async () => {
    const attacker = newAddress()
    for (let i = 0; i < 10; i++) await tokenRequest(attacker)
    expectOAuth429(await tokenRequest(attacker))
    expect((await tokenRequest(newAddress())).statusCode).toBe(400)
  })

  it('the client_id of HTTP Basic counts like the body’s', async () => {
    const address = newAddress()
    const basic = { authorization: basicAuth(party.client.id, 'unused') }
    for (let i = 0; i < 3; i++) await tokenRequest(address)
    for (let i = 0; i < 2; i++) await tokenRequest(address, party.client.id, basic)
    expectOAuth429(await tokenRequest(address, party.client.id, basic))
  })
})

describe('requests naming no valid caller: UNIDENTIFIED_RATE_LIMIT per address a minute', () => {
  it('without client_id: the 4th gets 429, and then the address waits for every OAuth request', async () => {
    const address = newAddress()
    for (let i = 0; i < 3; i++) {
      const res = await post('/api/oauth/token', address, { grant_type: 'refresh_token', refresh_token: 'x' })
      expect(res.statusCode).toBe(400)
    }
    expectOAuth429(await post('/api/oauth/token', address, { grant_type: 'refresh_token' }))
    expectOAuth429(await tokenRequest(address))
    expect((await tokenRequest(newAddress())).statusCode).toBe(400)
    clock.advance(60)
    expect((await tokenRequest(address)).statusCode).toBe(400)
  })

  it('made-up client ids buy no fresh quota: each 401 counts against the address', async () => {
    const address = newAddress()
    for (let i = 0; i < 3; i++) {
      const res = await tokenRequest(address, `made-up-client-${i}`)
      expect(res.statusCode).toBe(401)
    }
    expectOAuth429(await tokenRequest(address, 'made-up-client-9'))
    expectOAuth429(await tokenRequest(address))
  })

  it('garbage bodies count too, whatever their answer (415, 413)', async () => {
    const address = newAddress()
    const garbage = (contentType: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        remoteAddress: address,
        headers: { 'content-type': contentType },
        payload,
      })
    expect((await garbage('text/plain', 'hello')).statusCode).toBe(415)
    expect((await garbage('application/json', '{not json')).statusCode).toBe(400)
    expect((await garbage('application/x-www-form-urlencoded', 'a'.repeat(70_000))).statusCode).toBe(413)
    expectOAuth429(await garbage('text/plain', 'hello'))
  })

  it('garbage client ids count as none', async () => {
    const address = newAddress()
    for (let i = 0; i < 3; i++) await tokenRequest(address, '<script>'.repeat(i + 1))
    expectOAuth429(await tokenRequest(address, 'x'.repeat(500)))
  })
})

describe('revocation: REVOCATION_RATE_LIMIT per (client_id, address) a minute', () => {
  it('the 4th gets 429 JSON', async () => {
    const address = newAddress()
    const revoke = () =>
      post('/api/oauth/revoke', address, { token: randomToken(), client_id: party.client.id })
    for (let i = 0; i < 3; i++) expect((await revoke()).statusCode).toBe(200)
    expectOAuth429(await revoke())
    expect(await rateLimitedCount(t, 'revocation')).toBeGreaterThan(0)
  })
})

describe('introspection: INTROSPECTION_RATE_LIMIT per (resource server, address) a minute', () => {
  it('the 5th gets 429 JSON; another resource server at the same address is not affected', async () => {
    const address = newAddress()
    const introspect = (credentials: ResourceServerCredentials) =>
      post(
        '/api/oauth/introspect',
        address,
        { token: randomToken() },
        { authorization: basicAuth(credentials.id, credentials.secret) },
      )
    for (let i = 0; i < 4; i++) expect((await introspect(rs)).statusCode).toBe(200)
    expectOAuth429(await introspect(rs))
    expect((await introspect(await createResourceServer(t))).statusCode).toBe(200)
  })

  it('a wrong secret (401) counts against the address; the valid resource server there is not held to it', async () => {
    const address = newAddress()
    const wrong = { authorization: basicAuth(rs.id, randomToken(32)) }
    for (let i = 0; i < 3; i++)
      expect((await post('/api/oauth/introspect', address, { token: 'x' }, wrong)).statusCode).toBe(401)
    expectOAuth429(await post('/api/oauth/introspect', address, { token: 'x' }, wrong))
    expectOAuth429(await tokenRequest(address))
    const valid = { authorization: basicAuth(rs.id, rs.secret) }
    expect((await post('/api/oauth/introspect', address, { token: 'x' }, valid)).statusCode).toBe(200)
  })
})

describe('revocation event feed: INTROSPECTION_RATE_LIMIT per (resource server, address) a minute, its own count', () => {
  const feed = (address: string, url: string, credentials: ResourceServerCredentials) =>
    t.app.inject({
      method: 'POST',
      url,
      remoteAddress: address,
      headers: {
        'content-type': 'application/json',
        authorization: basicAuth(credentials.id, credentials.secret),
      },
      payload: url.endsWith('/poll') ? { returnImmediately: true } : {},
    })

  it('stream creation and polls count together; the 5th gets 429 JSON; introspection is counted apart', async () => {
    const address = newAddress()
    const created = await feed(address, '/api/events/streams', rs)
    expect(created.statusCode).toBe(201)
    const poll = `/api/events/streams/${created.json().stream_id}/poll`
    for (let i = 0; i < 3; i++) expect((await feed(address, poll, rs)).statusCode).toBe(200)
    expectOAuth429(await feed(address, '/api/events/streams', rs))
    expect((await feed(address, poll, rs)).statusCode).toBe(429)
    const introspected = await post(
      '/api/oauth/introspect',
      address,
      { token: randomToken() },
      { authorization: basicAuth(rs.id, rs.secret) },
    )
    expect(introspected.statusCode).toBe(200)
  })

  it('a wrong secret (401) counts against the address; the valid resource server there is not held to it', async () => {
    const address = newAddress()
    const wrong = { id: rs.id, secret: randomToken(32) }
    for (let i = 0; i < 3; i++)
      expect((await feed(address, '/api/events/streams', wrong)).statusCode).toBe(401)
    expectOAuth429(await feed(address, '/api/events/streams', wrong))
    expect((await feed(address, '/api/events/streams', rs)).statusCode).toBe(201)
  })
})

describe('one address cannot take a resource server offline (issue 31, item 3)', () => {
  it('35 garbage token requests every 3 s from the API’s address: its introspection and feed still answer', async () => {
    // The production defaults (UNIDENTIFIED_RATE_LIMIT 30 a minute), over this file's database.
    const defaults = await buildTestApp({ clock, database: t.database })
    try {
      const api = await createResourceServer(defaults)
      const address = newAddress() // the links API's host, and the attacker's (or a proxy without TRUST_PROXY)
      const as = { 'content-type': 'application/json', authorization: basicAuth(api.id, api.secret) }
      const call = (url: string, payload: object | string, headers: Record<string, string> = as) =>
        defaults.app.inject({ method: 'POST', url, remoteAddress: address, headers, payload })
      const created = await call('/api/events/streams', {})
      expect(created.statusCode).toBe(201)
      const poll = `/api/events/streams/${created.json().stream_id}/poll`
      const statuses = new Set<number>()
      for (let round = 0; round < 25; round++) {
        const garbage = await Promise.all(
          Array.from({ length: 35 }, () =>
            defaults.app.inject({
              method: 'POST',
              url: '/api/oauth/token',
              remoteAddress: address,
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              payload: 'grant_type=refresh_token&refresh_token=garbage',
            }),
          ),
        )
        for (const res of garbage) statuses.add(res.statusCode)
        const introspected = await call('/api/oauth/introspect', `token=${randomToken()}`, {
          ...as,
          'content-type': 'application/x-www-form-urlencoded',
        })
        expect(introspected.statusCode).toBe(200)
        expect(introspected.json()).toEqual({ active: false })
        expect((await call(poll, { returnImmediately: true })).statusCode).toBe(200)
        clock.advance(3)
      }
      expect(statuses).toEqual(new Set([400, 429])) // the garbage itself is held back
      // A wrong secret from there is still held to the address's spent quota.
      const wrong = { ...as, authorization: basicAuth(api.id, randomToken(32)) }
      expect((await call('/api/oauth/introspect', {}, wrong)).statusCode).toBe(429)
    } finally {
      await defaults.close()
    }
  })
})

describe('authorization endpoint: AUTHORIZE_RATE_LIMIT per address a minute', () => {
  it('the 4th request gets a 429 page with Retry-After; the continuation and the consent form count too', async () => {
    const s = await seed(t)
    const browser = new Browser(t.app, newAddress())
    const first = await browser.get(authorizeUrl(s.params))
    expect(first.statusCode).toBe(303)
    expect((await browser.get(`/oauth/authorize/continue?request=nothing`)).statusCode).toBe(400)
    expect((await browser.post('/oauth/authorize', { decision: 'allow' })).statusCode).toBe(403)
    const refused = await browser.get(authorizeUrl(s.params))
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['content-type']).toMatch(/^text\/html/)
    expect(refused.headers.location).toBeUndefined() // never a redirect to the client
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.body).toContain('<h1 id="error-title">Too many requests</h1>')
    expect(refused.body).toContain('Wait 60 seconds, then go back and try again.')
    expect(refused.body).not.toMatch(/<script|Error:|at .*\.ts:\d+/)
    expect((await new Browser(t.app, newAddress()).get(authorizeUrl(s.params))).statusCode).toBe(303)
    clock.advance(60)
    expect((await browser.get(authorizeUrl(s.params))).statusCode).toBe(303)
  })
})

describe('RATE_LIMITS=false (benchmarks)', () => {
  it('limits nothing', async () => {
    const open = await buildTestApp({
      clock,
      database: t.database,
      env: { RATE_LIMITS: 'false', TOKEN_RATE_LIMIT: '1', UNIDENTIFIED_RATE_LIMIT: '1' },
    })
    try {
      const params = { grant_type: 'refresh_token', refresh_token: 'x', client_id: party.client.id }
      for (let i = 0; i < 5; i++) expect((await postToken(open, params)).statusCode).toBe(400)
    } finally {
      await open.close()
    }
  })
})
