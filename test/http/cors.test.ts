import type { KyselyPlugin } from 'kysely'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createClientOrigins } from '../../src/clients/client-origins.js'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { createParty, exchangeCode, mintCode, type Party } from '../helpers/fixtures.js'

/**
 * CORS for browser-only applications (docs/integrating.md, "In the browser"): token and revocation
 * answer the origins of enabled clients' redirect URIs, metadata and JWKS answer any origin, and
 * nothing else answers CORS at all.
 */

const APP_ORIGIN = 'https://app.example' // createParty's redirect URI is https://app.example/callback
const OTHER_ORIGIN = 'https://other.example'
const UNKNOWN_ORIGIN = 'https://evil.example'

/** Counts the statements that read the clients' redirect URIs for the CORS cache. */
function originReads() {
  const seen = { count: 0 }
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      const node = args.node as {
        kind: string
        from?: { froms: { table?: { identifier?: { name: string } } }[] }
      }
      const tables = node.from?.froms.map((f) => f.table?.identifier?.name) ?? []
      const sql = JSON.stringify(node)
      if (node.kind === 'SelectQueryNode' && tables.includes('clients') && sql.includes('redirect_uris'))
        seen.count++
      return args.node
    },
    transformResult: async (args) => args.result,
  }
  return { seen, plugin }
}

let database: TestDatabase
let t: TestApp
let party: Party
const reads = originReads()
beforeAll(async () => {
  database = await createTestDatabase()
  t = await buildTestApp({
    database: { ...database, db: database.db.withPlugin(reads.plugin) },
    env: GENEROUS_LIMITS,
  })
  party = await createParty(t)
  await createParty(t, { redirectUri: `${OTHER_ORIGIN}/callback` }) // another client's origin
})
afterAll(async () => {
  await t.close()
  await database.close()
})

function post(url: string, form: Record<string, string>, origin?: string) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(origin === undefined ? {} : { origin }),
    },
    payload: new URLSearchParams(form).toString(),
  })
}

function preflight(url: string, origin: string, app = t.app) {
  return app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,authorization,dpop',
    },
  })
}

async function codeExchange(origin?: string, p: Party = party) {
  const { code, verifier } = await mintCode(t, p)
  const form = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: p.client.id }
  return { res: await post('/api/oauth/token', form, origin), form }
}

function expectCorsFor(res: LightMyRequestResponse, origin: string) {
  expect(res.headers['access-control-allow-origin']).toBe(origin)
  expect(res.headers.vary).toBe('Origin')
  expect(res.headers['access-control-expose-headers']).toBe('WWW-Authenticate, Retry-After, DPoP-Nonce')
  expect(res.headers['access-control-allow-credentials']).toBeUndefined()
}

function expectNoCors(res: LightMyRequestResponse) {
  for (const name of Object.keys(res.headers)) expect(name).not.toMatch(/^access-control-/)
}

describe.each(['/api/oauth/token', '/api/oauth/revoke'])('%s', (path) => {
  it('a preflight from a registered origin: 204 with methods, headers, max-age, never credentials', async () => {
    const res = await preflight(path, APP_ORIGIN)
    expect(res.statusCode).toBe(204)
    expectCorsFor(res, APP_ORIGIN)
    expect(res.headers['access-control-allow-methods']).toBe('POST')
    expect(res.headers['access-control-allow-headers']).toBe('Content-Type, Authorization, DPoP')
    expect(res.headers['access-control-max-age']).toBe('600')
    expect(res.headers.allow).toBe('OPTIONS, POST')
  })

  it('a preflight from an origin no client registered: 400 invalid_request, no CORS headers', async () => {
    const res = await preflight(path, UNKNOWN_ORIGIN)
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
    expectNoCors(res)
    const opaque = await preflight(path, 'null')
    expect(opaque.statusCode).toBe(400)
    expectNoCors(opaque)
  })

  it('OPTIONS without Origin is no preflight: 204 with Allow and nothing more', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: path })
    expect(res.statusCode).toBe(204)
    expect(res.headers.allow).toBe('OPTIONS, POST')
    expectNoCors(res)
  })
})

describe('the token endpoint', () => {
  it('answers the client’s own origin, errors included', async () => {
    const { res } = await codeExchange(APP_ORIGIN)
    expect(res.statusCode, res.body).toBe(200)
    expectCorsFor(res, APP_ORIGIN)
    const refresh = await post(
      '/api/oauth/token',
      { grant_type: 'refresh_token', refresh_token: res.json().refresh_token, client_id: party.client.id },
      APP_ORIGIN,
    )
    expect(refresh.statusCode).toBe(200)
    expectCorsFor(refresh, APP_ORIGIN)
    const unknownToken = await post(
      '/api/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'x'.repeat(43), client_id: party.client.id },
      APP_ORIGIN,
    )
    expect(unknownToken.json().error).toBe('invalid_grant')
    expectCorsFor(unknownToken, APP_ORIGIN)
    const unknownClient = await post(
      '/api/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'no-such-client-id' },
      APP_ORIGIN,
    )
    expect(unknownClient.statusCode).toBe(401)
    expectCorsFor(unknownClient, APP_ORIGIN) // and WWW-Authenticate is exposed to the page
  })

  it('refuses an origin no client registered before spending the code, and says nothing to it', async () => {
    const { res, form } = await codeExchange(UNKNOWN_ORIGIN)
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
    expectNoCors(res)
    const retry = await post('/api/oauth/token', form)
    expect(retry.statusCode, retry.body).toBe(200)
  })

  it('refuses another client’s registered origin once the request names its client, code not spent', async () => {
    const { res, form } = await codeExchange(OTHER_ORIGIN)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'This origin is not the origin of a redirect URI registered for the client.',
    })
    const retry = await post('/api/oauth/token', form, APP_ORIGIN)
    expect(retry.statusCode, retry.body).toBe(200)
  })

  it('without Origin (not a browser) or from the issuer’s own origin: no CORS, as before', async () => {
    for (const origin of [undefined, new URL(t.config.issuer).origin]) {
      const { res } = await codeExchange(origin)
      expect(res.statusCode, res.body).toBe(200)
      expectNoCors(res)
      expect(res.headers.vary).toBe('Origin')
    }
  })

  it('reads the registered origins from the database only for requests that carry an Origin', async () => {
    await codeExchange(APP_ORIGIN) // the snapshot is fresh now
    const before = reads.seen.count
    for (let i = 0; i < 5; i++) expect((await codeExchange()).res.statusCode).toBe(200)
    for (let i = 0; i < 5; i++) expect((await codeExchange(APP_ORIGIN)).res.statusCode).toBe(200)
    expect(reads.seen.count).toBe(before)
  })
})

describe('how often the origin is checked', () => {
  it('once per request: the named client’s origins for a request, any client’s for a preflight or an answer given before the client is known', async () => {
    const registered = vi.spyOn(t.services.clients, 'isRegisteredOrigin')
    const own = vi.spyOn(t.services.clients, 'isOriginOf')
    const checks = () => registered.mock.calls.length + own.mock.calls.length
    const reset = () => {
      registered.mockClear()
      own.mockClear()
    }
    try {
      for (const origin of [APP_ORIGIN, UNKNOWN_ORIGIN]) {
        reset()
        await codeExchange(origin)
        expect(checks(), origin).toBe(1)
        expect(own).toHaveBeenCalledTimes(1)
      }
      reset()
      await preflight('/api/oauth/token', APP_ORIGIN)
      expect(checks()).toBe(1)

      // A body that does not parse is answered before any client is named: a registered page can
      // still read why, an unregistered one cannot.
      for (const [origin, readable] of [
        [APP_ORIGIN, true],
        [UNKNOWN_ORIGIN, false],
      ] as const) {
        reset()
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/oauth/token',
          headers: { 'content-type': 'application/json', origin },
          payload: '{"grant_type":',
        })
        expect(res.statusCode).toBe(400)
        if (readable) expectCorsFor(res, origin)
        else expectNoCors(res)
        expect(checks()).toBe(1)
      }
    } finally {
      registered.mockRestore()
      own.mockRestore()
    }
  })
})

describe('the revocation endpoint', () => {
  it('answers the client’s own origin and refuses others', async () => {
    const tokens = await exchangeCode(t, party)
    const res = await post(
      '/api/oauth/revoke',
      { token: tokens.refresh_token, client_id: party.client.id },
      APP_ORIGIN,
    )
    expect(res.statusCode).toBe(200)
    expectCorsFor(res, APP_ORIGIN)
    const foreign = await post(
      '/api/oauth/revoke',
      { token: tokens.access_token, client_id: party.client.id },
      OTHER_ORIGIN,
    )
    expect(foreign.statusCode).toBe(400)
  })
})

describe.each(['/.well-known/oauth-authorization-server', '/.well-known/jwks.json'])('%s', (path) => {
  it('is public: Access-Control-Allow-Origin * for any origin, and a preflight', async () => {
    const res = await t.app.inject({ method: 'GET', url: path, headers: { origin: UNKNOWN_ORIGIN } })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
    const options = await t.app.inject({
      method: 'OPTIONS',
      url: path,
      headers: { origin: UNKNOWN_ORIGIN, 'access-control-request-method': 'GET' },
    })
    expect(options.statusCode).toBe(204)
    expect(options.headers['access-control-allow-origin']).toBe('*')
    expect(options.headers['access-control-allow-methods']).toBe('GET, HEAD')
  })
})

describe('no CORS anywhere else', () => {
  it.each([
    ['GET', '/login'],
    ['GET', '/oauth/authorize'],
    ['GET', '/account/apps'],
    ['GET', '/api/account/apps'],
    ['OPTIONS', '/api/account/apps'],
    ['POST', '/api/oauth/introspect'],
    ['OPTIONS', '/api/oauth/introspect'],
    ['GET', '/openapi.json'],
  ])('%s %s from a registered origin', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { origin: APP_ORIGIN } })
    expectNoCors(res)
  })

  it('nor on the admin API', async () => {
    for (const method of ['GET', 'OPTIONS'] as const) {
      const res = await t.admin.inject({
        method,
        url: '/admin/clients',
        headers: { ...adminHeaders, origin: APP_ORIGIN },
      })
      expectNoCors(res)
    }
  })
})

describe('clients created and disabled at runtime', () => {
  it('reach this instance’s origins at once', async () => {
    expect((await preflight('/api/oauth/token', 'https://new.example')).statusCode).toBe(400)
    const created = await createParty(t, { redirectUri: 'https://new.example/cb' })
    expect((await preflight('/api/oauth/token', 'https://new.example')).statusCode).toBe(204)
    await t.services.clients.disableClient(created.client.id)
    expect((await preflight('/api/oauth/token', 'https://new.example')).statusCode).toBe(400)
  })

  it('reach another instance on the same database: a new client within a second', async () => {
    const second = await buildTestApp({ database, env: GENEROUS_LIMITS })
    try {
      expect((await preflight('/api/oauth/token', 'https://fresh.example', second.app)).statusCode).toBe(400)
      await createParty(t, { redirectUri: 'https://fresh.example/cb' }) // through the first instance
      await new Promise((resolve) => setTimeout(resolve, 1100))
      expect((await preflight('/api/oauth/token', 'https://fresh.example', second.app)).statusCode).toBe(204)
    } finally {
      await second.close()
    }
  })
})

describe('the origins cache (createClientOrigins)', () => {
  it('re-reads on a miss at most once per floor, and drops a client disabled elsewhere after max age', async () => {
    let now = 0
    const counted = originReads()
    const origins = createClientOrigins(database.db.withPlugin(counted.plugin), {
      maxAgeMs: 60_000,
      missRefreshFloorMs: 1_000,
      now: () => now,
    })
    expect(await origins.isOriginOf(APP_ORIGIN, party.client.id)).toBe(true)
    expect(await origins.isOriginOf(OTHER_ORIGIN, party.client.id)).toBe(false)
    expect(await origins.isOriginOf(APP_ORIGIN, 'no-such-client-id')).toBeUndefined()
    expect(counted.seen.count).toBe(1)
    // Misses inside the floor cost nothing; after it, one read for any number of concurrent misses.
    for (let i = 0; i < 10; i++) expect(await origins.isRegisteredOrigin(`https://x${i}.example`)).toBe(false)
    expect(counted.seen.count).toBe(1)
    now += 1_500
    await Promise.all([1, 2, 3].map((i) => origins.isRegisteredOrigin(`https://y${i}.example`)))
    expect(counted.seen.count).toBe(2)
    // Disabled by another instance (not through this cache): still allowed until the max age.
    const doomed = await createParty(t, { redirectUri: 'https://doomed.example/cb' })
    now += 1_500
    expect(await origins.isRegisteredOrigin('https://doomed.example')).toBe(true)
    await t.services.clients.disableClient(doomed.client.id)
    now += 30_000
    expect(await origins.isRegisteredOrigin('https://doomed.example')).toBe(true)
    now += 30_000
    expect(await origins.isRegisteredOrigin('https://doomed.example')).toBe(false)
  })
})
