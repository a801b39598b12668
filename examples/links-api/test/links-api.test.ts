import type { FastifyInstance } from 'fastify'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { accessTokenHash } from '@linkauth/resource/dpop'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildLinksApp } from '../src/app.js'
import { connectLinksDatabase } from '../src/db/connect.js'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import {
  CHALLENGE,
  hiddenField,
  PASSWORD,
  REDIRECT_URI,
  seed,
  VERIFIER,
} from '../../../test/helpers/browser.js'
import { createParty, exchangeCode, type Party } from '../../../test/helpers/fixtures.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { captureLogger, nowSeconds, requestsServed, resignedToken } from '../../../test/helpers/resource.js'
import { freePort } from '../../../test/helpers/net.js'
import { createResourceServer, type ResourceServerCredentials } from '../../../test/helpers/tokens.js'
import { createLinksTestDatabase, type LinksTestDatabase } from './links-database.js'
import { apiCall } from '../../../test/helpers/api-call.js'

/**
 * Both services over real HTTP: the authorization server (with its revocation feed) and the links
 * API, which verifies tokens with @linkauth/resource, on the same test database in its own schema.
 */
let t: TestApp
let issuer: string
let rs: ResourceServerCredentials
let linksDb: LinksTestDatabase
let verifier: ResourceVerifier
let linksApp: FastifyInstance
let linksBase: string
/**
 * The links API's resource identifier. It is not where the test listens (ports change from one
 * start to the next), as behind a proxy. Tokens without a `resource` carry the server's
 * ACCESS_TOKEN_AUDIENCE, set to it here, so the code exchange of the fixtures yields tokens for it.
 */
const LINKS_RESOURCE = 'https://links.example.com/api'
/** While true, the authorization server refuses its event feed (503), as if it were down. */
let feedDown = false

/** Introspection requests the authorization server answered (counted on its side, by its metrics). */
const introspections = () => requestsServed(t, '/api/oauth/introspect')

async function startLinksApi(
  options: { maxFeedStalenessSeconds?: number; logger?: ReturnType<typeof captureLogger>['logger'] } = {},
) {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const v = await createResourceVerifier({
    issuer,
    resource: LINKS_RESOURCE,
    credentials: rs,
    // What the verifier says goes to a list (a test may read it), not to the test run's output.
    logger: captureLogger().logger,
    ...options,
  })
  const app = await buildLinksApp({ config: { publicUrl: base }, db: linksDb.db, verifier: v })
  await app.listen({ port, host: '127.0.0.1' })
  return { base, verifier: v, app }
}

beforeAll(async () => {
  const port = await freePort()
  issuer = `http://127.0.0.1:${port}`
  // Short long polls keep the feed-outage test quick; revocations are pushed at once either way.
  t = await buildTestApp({
    env: { ISSUER: issuer, EVENTS_MAX_WAIT_SECONDS: '2', ACCESS_TOKEN_AUDIENCE: LINKS_RESOURCE },
  })
  t.app.addHook('onRequest', async (request, reply) => {
    if (feedDown && request.url.startsWith('/api/events/'))
      return reply.code(503).send({ error: 'temporarily_unavailable', error_description: 'feed down (test)' })
  })
  await t.app.listen({ port, host: '127.0.0.1' })
  rs = await createResourceServer(t)
  linksDb = await createLinksTestDatabase(t.database)
  ;({ base: linksBase, verifier, app: linksApp } = await startLinksApi())
})
afterAll(async () => {
  await linksApp?.close()
  await verifier?.close()
  await linksDb?.close()
  await t?.close()
})

const api = (
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  options: { base?: string; headers?: Record<string, string> } = {},
) => apiCall(options.base ?? linksBase, method, path, token, { json: body, headers: options.headers })

/** An access token from the real token endpoint for a new user holding `scopes`. */
async function tokenFor(scopes: ('links:read' | 'links:write')[], party?: Party) {
  const p = party ?? (await createParty(t, { grantScopes: scopes }))
  return { token: (await exchangeCode(t, p)).access_token, party: p }
}

let alice: { token: string; party: Party }
beforeAll(async () => {
  alice = await tokenFor(['links:read', 'links:write'])
})

describe('scopes', () => {
  it('a token with only links:read can list but not create (403 insufficient_scope)', async () => {
    const { token } = await tokenFor(['links:read'])
    const list = await api('GET', '/api/links', token)
    expect(list.status).toBe(200)
    expect(list.body).toEqual({ links: [], next_cursor: null })
    const create = await api('POST', '/api/links', token, { target_url: 'https://example.com/' })
    expect(create.status).toBe(403)
    expect(create.body.error).toBe('insufficient_scope')
    expect(create.headers.get('www-authenticate')).toMatch(/^Bearer .*error="insufficient_scope"/)
    expect(create.headers.get('www-authenticate')).toContain('scope="links:write"')
  })

  it('a token with only links:write can create, but not read', async () => {
    const { token } = await tokenFor(['links:write'])
    const create = await api('POST', '/api/links', token, { target_url: 'https://example.com/w' })
    expect(create.status).toBe(201)
    expect(create.body.target_url).toBe('https://example.com/w')
    const read = await api('GET', `/api/links/${String(create.body.id)}`, token)
    expect(read.status).toBe(403)
    expect(read.headers.get('www-authenticate')).toContain('scope="links:read"')
  })
})

describe('links over HTTP', () => {
  it('create, read, change, list by tag or text, tags, delete', async () => {
    const created = await api('POST', '/api/links', alice.token, {
      target_url: 'https://shop.example/spring',
      slug: 'Spring-Sale',
      tags: ['Promo', 'spring'],
    })
    expect(created.status).toBe(201)
    const id = String(created.body.id)
    expect(created.headers.get('location')).toBe(`/api/links/${id}`)
    expect(created.headers.get('cache-control')).toBe('no-store')
    expect(created.body).toMatchObject({
      slug: 'Spring-Sale',
      short_url: `${linksBase}/Spring-Sale`,
      target_url: 'https://shop.example/spring',
      tags: ['promo', 'spring'],
      clicks: 0,
    })
    const other = await api('POST', '/api/links', alice.token, { target_url: 'https://blog.example/' })
    expect(other.status).toBe(201)
    expect(String(other.body.slug)).toMatch(/^[a-z2-9]{8}$/)

    expect((await api('GET', `/api/links/${id}`, alice.token)).body).toEqual(created.body)
    const changed = await api('PATCH', `/api/links/${id}`, alice.token, { tags: ['promo', 'summer'] })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({
      tags: ['promo', 'summer'],
      target_url: 'https://shop.example/spring',
    })

    const all = await api('GET', '/api/links', alice.token)
    expect((all.body.links as { id: string }[]).map((l) => l.id)).toEqual([String(other.body.id), id])
    const promo = await api('GET', '/api/links?tag=promo', alice.token)
    expect((promo.body.links as { id: string }[]).map((l) => l.id)).toEqual([id])
    const found = await api('GET', '/api/links?q=SPRING', alice.token)
    expect((found.body.links as { id: string }[]).map((l) => l.id)).toEqual([id])
    expect((await api('GET', '/api/links?q=%25', alice.token)).body.links).toEqual([])
    expect((await api('GET', `/api/links?q=${'x'.repeat(101)}`, alice.token)).status).toBe(400)
    const paged = await api('GET', '/api/links?limit=1', alice.token)
    expect(paged.body.next_cursor).toEqual(expect.any(String))
    const next = await api('GET', `/api/links?limit=1&cursor=${String(paged.body.next_cursor)}`, alice.token)
    expect((next.body.links as { id: string }[]).map((l) => l.id)).toEqual([id])
    expect(next.body.next_cursor).toBeNull()
    expect((await api('GET', '/api/tags', alice.token)).body).toEqual({
      tags: [
        { tag: 'promo', links: 1 },
        { tag: 'summer', links: 1 },
      ],
    })

    const deleted = await api('DELETE', `/api/links/${id}`, alice.token)
    expect(deleted.status).toBe(204)
    expect((await api('GET', `/api/links/${id}`, alice.token)).status).toBe(404)
    expect((await api('GET', '/Spring-Sale', undefined)).status).toBe(404)
    expect((await api('DELETE', `/api/links/${id}`, alice.token)).status).toBe(404)
  })

  it("another user's link is 404, never 403, and never listed", async () => {
    const mine = await api('POST', '/api/links', alice.token, { target_url: 'https://alice.example/' })
    const id = String(mine.body.id)
    const { token: bob } = await tokenFor(['links:read', 'links:write'])
    for (const [method, path, body] of [
      ['GET', `/api/links/${id}`],
      ['PATCH', `/api/links/${id}`, { target_url: 'https://bob.example/' }],
      ['DELETE', `/api/links/${id}`],
      ['GET', `/api/links/${id}/stats`],
    ] as const) {
      const res = await api(method, path, bob, body)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(res.body).toEqual({ error: 'not_found', error_description: 'No link with this id.' })
    }
    expect((await api('GET', '/api/links', bob)).body.links).toEqual([])
    expect((await api('GET', `/api/links/${id}`, alice.token)).body.target_url).toBe('https://alice.example/')
  })

  it('the short URL redirects and counts each click; HEAD does not count; stats show them by day', async () => {
    const link = await api('POST', '/api/links', alice.token, {
      target_url: 'https://docs.example/guide?x=1',
      slug: 'guide',
    })
    const id = String(link.body.id)
    for (let i = 0; i < 3; i++) {
      const hop = await api('GET', '/guide', undefined)
      expect(hop.status).toBe(302)
      expect(hop.headers.get('location')).toBe('https://docs.example/guide?x=1')
      expect(hop.headers.get('cache-control')).toBe('no-store')
    }
    expect((await api('GET', '/GUIDE', undefined)).status).toBe(302)
    expect((await api('HEAD', '/guide', undefined)).status).toBe(302)

    const today = new Date().toISOString().slice(0, 10)
    const stats = await api('GET', `/api/links/${id}/stats?from=${today}&to=${today}`, alice.token)
    expect(stats.status).toBe(200)
    expect(stats.body).toEqual({
      link_id: id,
      from: today,
      to: today,
      total_clicks: 4,
      clicks_in_range: 4,
      days: [{ date: today, clicks: 4 }],
    })
    expect((await api('GET', `/api/links/${id}`, alice.token)).body.clicks).toBe(4)
    const month = await api('GET', `/api/links/${id}/stats`, alice.token)
    expect(month.body).toMatchObject({ to: today, clicks_in_range: 4 })
    expect(month.body.days).toHaveLength(30)
  })

  it('an unknown short URL is a 404 page, not JSON and not a redirect', async () => {
    for (const path of ['/nosuchlink', '/a.b', '/%2e%2e', `/${'x'.repeat(150)}`]) {
      const res = await api('GET', path, undefined)
      expect(res.status, path).toBe(404)
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
      expect(res.text).toContain('This short link does not exist')
    }
  })

  it('/mcp while the MCP endpoint is off is a JSON 404 saying how to turn it on', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await api(method, '/mcp', undefined)
      expect(res.status, method).toBe(404)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      const body = JSON.parse(res.text) as { error: string; error_description: string }
      expect(body.error).toBe('not_found')
      expect(body.error_description).toContain('The MCP endpoint is off on this server')
      expect(body.error_description).toContain('LINKS_MCP_RESOURCE_SERVER_ID')
    }
  })
})

describe('bad input answers 400 (or 404/409/413/415) with a clear error, never a 500', () => {
  it.each([
    [
      'POST',
      '/api/links',
      { target_url: 'javascript:alert(1)' },
      400,
      'target_url: must be an http or https URL',
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://u:p@example.com/' },
      400,
      'target_url: must not contain a user name or password',
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://example.com/', slug: 'api' },
      400,
      'slug: "api" is reserved; choose another slug',
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://example.com/', slug: 'no way' },
      400,
      /^slug: 3 to 64 letters/,
    ],
    [
      'POST',
      '/api/links',
      { target_url: 'https://example.com/', tags: 'x' },
      400,
      'tags: must be a list of tags',
    ],
    ['POST', '/api/links', { slug: 'abc' }, 400, 'target_url: is required'],
    [
      'POST',
      '/api/links',
      { target_url: 'https://example.com/', owner_id: 'x' },
      400,
      'unknown parameter: owner_id',
    ],
    ['POST', '/api/links', '[1,2]', 400, 'the body must be a JSON object'],
    ['POST', '/api/links', '{"target_url":', 400, 'The request body is not valid JSON.'],
    [
      'PATCH',
      '/api/links/00000000-0000-4000-8000-000000000000',
      {},
      400,
      'name target_url or tags to change',
    ],
    ['GET', '/api/links?limit=1000', undefined, 400, 'limit: must be from 1 to 100'],
    ['GET', '/api/links?limit=abc', undefined, 400, 'limit: must be a whole number from 1 to 100'],
    ['GET', '/api/links?cursor=bogus', undefined, 400, /^cursor: is not a cursor of this API/],
    ['GET', '/api/links?tag=a&tag=b', undefined, 400, /^tag: /],
    ['GET', '/api/links?page=2', undefined, 400, 'unknown parameter: page'],
    ['GET', '/api/links/not-a-uuid', undefined, 404, 'No link with this id.'],
    ['GET', '/api/nothing-here', undefined, 404, 'No such endpoint.'],
  ] as const)('%s %s %j → %i', async (method, path, body, status, description) => {
    const res = await api(method, path, alice.token, body)
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(Object.keys(res.body).sort()).toEqual(['error', 'error_description'])
    if (typeof description === 'string') expect(res.body.error_description).toBe(description)
    else expect(res.body.error_description).toMatch(description)
  })

  it('a target at this API under another loopback name is its own origin too (no short link to itself)', async () => {
    // The API listens at http://127.0.0.1:<port>; localhost, [::1] and the rest of 127/8 reach it too.
    const { port } = new URL(linksBase)
    for (const host of ['localhost', '[::1]', '127.0.0.2', 'app.localhost', '[::ffff:127.0.0.1]']) {
      const res = await api('POST', '/api/links', alice.token, { target_url: `http://${host}:${port}/x` })
      expect(res.status, host).toBe(400)
      expect(res.body.error_description).toBe('target_url: must not point at this short-link service')
    }
    // Another port, or https on this one, is another origin: those are accepted.
    const elsewhere = `http://localhost:${Number(port) === 65535 ? 1 : Number(port) + 1}/x`
    for (const target_url of [elsewhere, `https://localhost:${port}/x`]) {
      const res = await api('POST', '/api/links', alice.token, { target_url })
      expect(res.status, target_url).toBe(201)
    }
  })

  it('stats ranges, media types, body size and a taken slug', async () => {
    const link = await api('POST', '/api/links', alice.token, {
      target_url: 'https://e.example/',
      slug: 'taken-one',
    })
    const stats = (q: string) => api('GET', `/api/links/${String(link.body.id)}/stats?${q}`, alice.token)
    expect((await stats('from=2026-03-05&to=2026-03-01')).body.error_description).toBe(
      'from: must not be after to',
    )
    expect((await stats('from=2020-01-01&to=2026-01-01')).body.error_description).toBe(
      'to: at most 366 days after from',
    )
    expect((await stats('from=2026-02-30')).body.error_description).toBe('from: must be a real calendar date')

    const taken = await api('POST', '/api/links', alice.token, {
      target_url: 'https://e.example/',
      slug: 'TAKEN-one',
    })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe('slug_taken')

    const form = await api('POST', '/api/links', alice.token, 'target_url=https://e.example/', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(form.status).toBe(415)
    expect(form.body).toEqual({
      error: 'invalid_request',
      error_description: 'Send the body as application/json.',
    })
    const huge = await api('POST', '/api/links', alice.token, {
      target_url: `https://e.example/${'a'.repeat(20_000)}`,
    })
    expect(huge.status).toBe(413)
  })
})

it('a database that is down answers 503 with Retry-After (a page on short URLs), never a 500', async () => {
  const port = await freePort()
  const down = await connectLinksDatabase({
    url: 'postgres://postgres@127.0.0.1:1/none',
    dataDir: '',
    poolSize: 1,
  })
  const app = await buildLinksApp({
    config: { publicUrl: `http://127.0.0.1:${port}` },
    db: down.db,
    verifier,
  })
  await app.listen({ port, host: '127.0.0.1' })
  try {
    const base = `http://127.0.0.1:${port}`
    const list = await api('GET', '/api/links', alice.token, undefined, { base })
    expect(list.status).toBe(503)
    expect(list.headers.get('retry-after')).toBe('5')
    expect(list.body.error).toBe('temporarily_unavailable')
    const hop = await api('GET', '/some-slug', undefined, undefined, { base })
    expect(hop.status).toBe(503)
    expect(hop.text).toContain('Short links are unavailable for a moment')
    const ready = await api('GET', '/readyz', undefined, undefined, { base })
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ status: 'unavailable', reason: 'database_unavailable' })
  } finally {
    await app.close()
    await down.close()
  }
})

describe('tokens the links API refuses', () => {
  const resigned = (claims: Record<string, unknown>) => resignedToken(t, alice.token, claims)

  it('a token signed with the real key but otherwise correct is accepted (the control)', async () => {
    expect((await api('GET', '/api/links', resigned({}))).status).toBe(200)
  })

  it('a token for the links API and the commerce API (asked for without resource) is accepted', async () => {
    const both = resigned({ aud: [LINKS_RESOURCE, 'https://commerce.example.com/api'] })
    expect((await api('GET', '/api/links', both)).status).toBe(200)
  })

  it.each([
    ['expired', () => resigned({ iat: nowSeconds() - 3600, exp: nowSeconds() - 3000 })],
    ['for another audience', () => resigned({ aud: 'https://other.example/api' })],
    ['for the commerce API', () => resigned({ aud: 'https://commerce.example.com/api' })],
    ['of the single audience before per-API tokens', () => resigned({ aud: `${issuer}/api` })],
    ['from another issuer', () => resigned({ iss: 'https://evil.example' })],
    [
      'tampered with (sub changed, signature kept)',
      () => {
        const [header, payload, signature] = alice.token.split('.') as [string, string, string]
        const claims = {
          ...JSON.parse(Buffer.from(payload, 'base64url').toString()),
          sub: crypto.randomUUID(),
        }
        return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`
      },
    ],
    [
      'unsigned (alg none)',
      () => {
        const [, payload] = alice.token.split('.') as [string, string]
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')
        return `${header}.${payload}.`
      },
    ],
    ['not a JWT at all', () => 'definitely-not-a-token'],
  ])('%s → 401 invalid_token', async (_what, token) => {
    const res = await api('GET', '/api/links', token())
    expect(res.status).toBe(401)
    expect(res.body.error).toBe('invalid_token')
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="links-api", resource_metadata="https:\/\/links\.example\.com\/\.well-known\/oauth-protected-resource\/api", error="invalid_token", error_description="[^"]+", DPoP realm="links-api", resource_metadata="https:\/\/links\.example\.com\/\.well-known\/oauth-protected-resource\/api", algs="ES256 EdDSA Ed25519 PS256"$/,
    )
  })

  it('describes itself (RFC 9728): its resource identifier, linkauth, its scopes; every 401 points there', async () => {
    const metadataPath = '/.well-known/oauth-protected-resource/api'
    const none = await api('GET', '/api/links', undefined)
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer realm="links-api", resource_metadata="https://links.example.com${metadataPath}", DPoP realm="links-api", resource_metadata="https://links.example.com${metadataPath}", algs="ES256 EdDSA Ed25519 PS256"`,
    )
    const res = await fetch(`${linksBase}${metadataPath}`)
    expect(res.status).toBe(200)
    const document = (await res.json()) as Record<string, unknown>
    expect(document).toEqual({
      resource: LINKS_RESOURCE,
      authorization_servers: [issuer],
      // The scopes its routes declare, in the order they are registered.
      scopes_supported: ['links:write', 'links:read'],
      bearer_methods_supported: ['header'],
      resource_name: 'Links API',
      dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'PS256'],
      dpop_bound_access_tokens_required: false,
    })
  })

  it('no token → 401 naming the realm and the metadata alone; a malformed header → 400 invalid_request', async () => {
    const none = await api('GET', '/api/links', undefined)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="links-api", resource_metadata="[^"]+", DPoP realm="links-api", resource_metadata="[^"]+", algs="[^"]+"$/,
    )
    const basic = await api('GET', '/api/links', undefined, undefined, {
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    })
    expect(basic.status).toBe(401)
    const malformed = await api('GET', '/api/links', undefined, undefined, {
      headers: { authorization: 'Bearer' },
    })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toBe('invalid_request')
  })

  it('takes DPoP-bound tokens (RFC 9449) with a proof for its public URL, and refuses them as Bearer', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256')
    const jwk = await exportJWK(publicKey)
    const bound = resigned({ cnf: { jkt: await calculateJwkThumbprint(jwk) } })
    const proof = (htu: string) =>
      new SignJWT({ htm: 'GET', htu, jti: crypto.randomUUID(), ath: accessTokenHash(bound) })
        .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
        .setIssuedAt()
        .sign(privateKey)
    const dpop = (htu: string) =>
      proof(htu).then((p) =>
        api('GET', '/api/links', undefined, undefined, {
          headers: { authorization: `DPoP ${bound}`, dpop: p },
        }),
      )
    expect((await dpop(`${linksBase}/api/links`)).status).toBe(200)
    const elsewhere = await dpop(`${LINKS_RESOURCE}/links`)
    expect(elsewhere.status).toBe(401)
    expect(elsewhere.body.error).toBe('invalid_dpop_proof')
    expect(elsewhere.headers.get('www-authenticate')).toMatch(
      /^DPoP realm="links-api", .*error="invalid_dpop_proof"/,
    )
    const asBearer = await api('GET', '/api/links', bound)
    expect(asBearer.status).toBe(401)
    expect(asBearer.body.error).toBe('invalid_token')
  })

  it('a refused request never reaches the handler: nothing is created', async () => {
    const { token } = await tokenFor(['links:read'])
    const before = await api('GET', '/api/links', alice.token)
    await api('POST', '/api/links', token, { target_url: 'https://sneaky.example/' })
    await api('POST', '/api/links', 'garbage', { target_url: 'https://sneaky.example/' })
    expect((await api('GET', '/api/links', alice.token)).body.links).toEqual(before.body.links)
  })
})

describe('revocation, key rotation and feed outages, end to end', () => {
  it('revoking the app on /account/apps stops its token at the links API within a second, without introspection', async () => {
    // The app's user authorizes it through the real pages; the app swaps the code for tokens.
    const s = await seed(t)
    const browser = new HttpBrowser(issuer)
    const authorize = `/oauth/authorize?${new URLSearchParams({ ...s.params, code_challenge: CHALLENGE })}`
    const callback = await browser.signInAndAllow(authorize, s.email, PASSWORD)
    const exchange = await fetch(`${issuer}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        code_verifier: VERIFIER,
        client_id: s.client.id,
        redirect_uri: REDIRECT_URI,
      }),
    })
    const accessToken = String(((await exchange.json()) as { access_token: string }).access_token)
    expect(
      (await api('POST', '/api/links', accessToken, { target_url: 'https://app.example/x' })).status,
    ).toBe(201)
    expect((await api('GET', '/api/links', accessToken)).status).toBe(200)

    const introspectionsBefore = await introspections()
    const verifierCallsBefore = verifier.stats().introspectionCalls
    const eventsBefore = verifier.stats().feedEventsReceived

    // The user revokes the app on the connected-apps page.
    const apps = await browser.request('/account/apps')
    expect(apps.body).toContain('aria-label="Revoke Link App"')
    const revoked = await browser.request(`/account/apps/${s.client.id}/revoke`, {
      method: 'POST',
      form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
    })
    expect(revoked.res.status).toBe(303)
    const revokedAt = performance.now()

    // The old access token, call after call, until refused: within one second.
    const answers: number[] = []
    let refusedAfterMs = Infinity
    while (performance.now() - revokedAt < 2000) {
      const res = await api('GET', '/api/links', accessToken)
      answers.push(res.status)
      if (res.status === 401) {
        refusedAfterMs = performance.now() - revokedAt
        expect(res.body.error).toBe('invalid_token')
        break
      }
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(answers.at(-1)).toBe(401)
    // Delivery takes some milliseconds (16–23 ms here): a call racing it may still pass; none after.
    expect(refusedAfterMs, `answers until refused: ${answers.join(', ')}`).toBeLessThan(1000)
    // No introspection in between: counted by the authorization server and by the verifier.
    expect((await introspections()) - introspectionsBefore).toBe(0)
    expect(verifier.stats().introspectionCalls - verifierCallsBefore).toBe(0)
    expect(verifier.stats().feedEventsReceived).toBeGreaterThan(eventsBefore)
    // It stays refused, for reading and writing alike.
    expect((await api('GET', '/api/links', accessToken)).status).toBe(401)
    expect(
      (await api('POST', '/api/links', accessToken, { target_url: 'https://app.example/y' })).status,
    ).toBe(401)
  })

  it('a signing-key rotation breaks nothing: old and new tokens verify', async () => {
    const party = await createParty(t)
    const before = (await exchangeCode(t, party)).access_token
    const fetchesBefore = verifier.stats().jwksFetches
    // The verifier refetches the key set on an unknown kid at most once a second (its default floor).
    await new Promise((r) => setTimeout(r, 1100))
    const rotated = await t.admin.inject({ method: 'POST', url: '/admin/keys/rotate', headers: adminHeaders })
    expect(rotated.statusCode).toBe(201)
    const after = (await exchangeCode(t, party)).access_token
    const kid = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid
    expect(kid(after)).not.toBe(kid(before))

    expect((await api('GET', '/api/links', after)).status).toBe(200)
    expect((await api('GET', '/api/links', before)).status).toBe(200)
    expect(verifier.stats().jwksFetches).toBeGreaterThan(fetchesBefore)
  })

  it('the feed going down switches the verifier to introspection per request, and back when it returns', async () => {
    // A second instance of the links API with a tight staleness bound, as an operator could run it
    // (3 s: tighter, and a loaded test machine's pauses look like outages).
    const log = captureLogger()
    const second = await startLinksApi({ maxFeedStalenessSeconds: 3, logger: log.logger })
    try {
      const party = await createParty(t)
      const token = (await exchangeCode(t, party)).access_token
      // A second token of the same grant, first shown to the API after the revocation below.
      const unused = (await exchangeCode(t, party)).access_token
      await expect.poll(() => second.verifier.status().mode, { timeout: 10_000, interval: 50 }).toBe('local')
      const calls = () => second.verifier.stats().introspectionCalls
      const before = calls()
      expect((await api('GET', '/api/links', token, undefined, { base: second.base })).status).toBe(200)
      expect(calls()).toBe(before)

      feedDown = true
      await expect
        .poll(() => second.verifier.status().mode, { timeout: 10_000, interval: 50 })
        .toBe('fallback')
      // The operator is told, in the service's log.
      expect(log.lines.some((l) => l.level === 'warn' && /introspection/.test(l.msg ?? ''))).toBe(true)
      const readyz = await api('GET', '/readyz', undefined, undefined, { base: second.base })
      expect(readyz.body).toMatchObject({ status: 'ready', verification: { mode: 'fallback' } })
      const seen = await introspections()
      expect((await api('GET', '/api/links', token, undefined, { base: second.base })).status).toBe(200)
      expect(calls()).toBeGreaterThan(before)
      expect(await introspections()).toBeGreaterThan(seen)

      // A revocation while the feed is down is still seen, through introspection (an answer of
      // `active` is reused for introspectionCacheSeconds, so the token never shown before tells).
      expect(await t.services.connectedApps.revoke(party.userId, party.client.id)).toBe(true)
      const refused = await api('GET', '/api/links', unused, undefined, { base: second.base })
      expect(refused.status).toBe(401)

      feedDown = false
      await expect.poll(() => second.verifier.status().mode, { timeout: 10_000, interval: 50 }).toBe('local')
      expect(log.lines.some((l) => l.level === 'info' && /locally/.test(l.msg ?? ''))).toBe(true)
      const other = (await exchangeCode(t, await createParty(t))).access_token
      const back = calls()
      expect((await api('GET', '/api/links', other, undefined, { base: second.base })).status).toBe(200)
      expect(calls()).toBe(back)
      // The revocation made during the outage reached the feed's state when it came back: refused locally.
      expect((await api('GET', '/api/links', token, undefined, { base: second.base })).status).toBe(401)
      expect((await api('GET', '/api/links', unused, undefined, { base: second.base })).status).toBe(401)
      expect(calls()).toBe(back)
    } finally {
      feedDown = false
      await second.app.close()
      await second.verifier.close()
    }
  })
})
