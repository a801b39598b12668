import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { authorizationServerMetadata } from '../../src/oauth/metadata.routes.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createParty, exchangeCode, mintCode } from '../helpers/fixtures.js'
import {
  checkResponse,
  createValidator,
  documentedOperations,
  type OpenApiDocument,
  registeredRoutes,
} from '../helpers/openapi.js'

/**
 * The OpenAPI documents against real answers: every JSON answer below is validated with a JSON
 * Schema 2020-12 validator against the schema of its documented status and media type, and every
 * route either app registers is documented (or is a page for people).
 */

/** Pages and forms for a browser: not JSON, so not in the OpenAPI documents. */
const HTML_ROUTES = new Set([
  'GET /static/style.css',
  'GET /login',
  'POST /login',
  'POST /logout',
  'GET /oauth/authorize/continue',
  'POST /oauth/authorize',
  'GET /account/apps',
  'POST /account/apps/{client_id}/revoke',
  'GET /account/password',
  'POST /account/password',
  'GET /account/reset-password',
  'POST /account/reset-password',
  'GET /metrics',
  // Passkeys (issue 30): the script, the sign-in form's passkey POST, the account area's pages.
  'GET /static/passkeys.js',
  'POST /login/passkey',
  'GET /account/activity',
  'POST /account/password/sign-in',
  'GET /account/passkeys',
  'POST /account/passkeys',
  'POST /account/passkeys/confirm',
  'POST /account/passkeys/confirm-passkey',
  'POST /account/passkeys/{id}/rename',
  'POST /account/passkeys/{id}/remove',
])

/** Documented, built on other branches; their checks run once they are merged. */
const COMING = new Set([
  'POST /api/oauth/revoke',
  'POST /api/oauth/introspect',
  'GET /api/account/apps',
  'DELETE /api/account/apps/{client_id}',
])

let t: TestApp
let publicDoc: OpenApiDocument
let adminDoc: OpenApiDocument
const ajv = createValidator()
const exercised = new Set<string>()

beforeAll(async () => {
  // Every operation's 401 is checked against a real answer: more wrong admin tokens than the
  // per-address failure limit allows in a minute (that limit has its own test in test/admin).
  t = await buildTestApp({ env: { ADMIN_AUTH_FAILURE_LIMIT: '1000' } })
  publicDoc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  adminDoc = (await t.admin.inject({ method: 'GET', url: '/openapi.json', headers: adminHeaders })).json()
})
afterAll(async () => t.close())

function has(app: FastifyInstance, operation: string): boolean {
  const [method, path] = operation.split(' ') as [string, string]
  return app.hasRoute({ method: method as 'GET', url: path.replace(/\{(\w+)\}/g, ':$1') })
}

function skipUnlessBuilt(ctx: TestContext, operation: string) {
  if (!has(t.app, operation)) ctx.skip()
}

/** Sends a request and checks the answer against the document of the listener it went to. */
async function check(
  listener: 'public' | 'admin',
  operation: string,
  request: InjectOptions,
  expectedStatus: number,
): Promise<LightMyRequestResponse> {
  const app = listener === 'public' ? t.app : t.admin
  const doc = listener === 'public' ? publicDoc : adminDoc
  const [method] = operation.split(' ') as [InjectOptions['method']]
  const res = await app.inject({ method, ...request })
  expect(res.statusCode, `${operation}: ${res.body}`).toBe(expectedStatus)
  expect(checkResponse(doc, ajv, operation, res)).toEqual([])
  exercised.add(`${listener} ${operation}`)
  return res
}

const TOKEN = '/api/oauth/token'
const REVOKE = '/api/oauth/revoke'
const INTROSPECT = '/api/oauth/introspect'
const form = (url: string, params: Record<string, string>) => ({
  url,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(params).toString(),
})
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

describe('the documents', () => {
  it('are OpenAPI 3.1 with an operationId on every operation', () => {
    for (const doc of [publicDoc, adminDoc] as unknown as Record<string, unknown>[]) {
      expect(doc.openapi).toBe('3.1.0')
      const paths = doc.paths as Record<string, Record<string, { operationId?: string }>>
      const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
      expect(ids.every((id) => typeof id === 'string')).toBe(true)
      expect(new Set(ids).size).toBe(ids.length)
    }
  })

  it('every schema in them compiles as JSON Schema 2020-12', () => {
    for (const doc of [publicDoc, adminDoc]) {
      for (const item of Object.values(doc.paths)) {
        for (const op of Object.values(item) as {
          responses: Record<string, { content?: Record<string, { schema?: object }> }>
          requestBody?: { content: Record<string, { schema: object }> }
        }[]) {
          const media = [
            ...Object.values(op.responses).flatMap((r) => Object.values(r.content ?? {})),
            ...Object.values(op.requestBody?.content ?? {}),
          ]
          for (const m of media) if (m.schema) expect(() => ajv.compile(m.schema!)).not.toThrow()
        }
      }
    }
  })

  it('token and revocation bodies may leave client_id out (it can come as the HTTP Basic user-id)', () => {
    const body = (path: string) => {
      const op = publicDoc.paths[path]!.post as unknown as {
        requestBody: { content: Record<string, { schema: object }> }
      }
      return op.requestBody.content['application/x-www-form-urlencoded']!.schema
    }
    const valid = (path: string, request: object) => ajv.compile(body(path))(request)
    const code = { grant_type: 'authorization_code', code: 'c', code_verifier: 'v'.repeat(43) }
    expect(valid('/api/oauth/token', code)).toBe(true)
    expect(valid('/api/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r' })).toBe(true)
    expect(valid('/api/oauth/revoke', { token: 't' })).toBe(true)
    expect(JSON.stringify(body('/api/oauth/revoke'))).toContain(
      'Required unless sent as the HTTP Basic user-id',
    )
  })

  it('every operation has a summary and states its access: `security: []` when open', () => {
    for (const doc of [publicDoc, adminDoc] as unknown as Record<string, unknown>[]) {
      const paths = doc.paths as Record<string, Record<string, { summary?: string; security?: unknown[] }>>
      for (const [path, item] of Object.entries(paths)) {
        for (const [method, op] of Object.entries(item)) {
          expect(op.summary, `${method} ${path}`).toMatch(/\S/)
          expect(op.security ?? doc.security, `${method} ${path}`).toBeInstanceOf(Array)
        }
      }
    }
    const open = (doc: OpenApiDocument, path: string) =>
      (doc.paths[path]!.get as unknown as { security?: unknown[] }).security
    for (const path of ['/.well-known/jwks.json', '/healthz', '/openapi.json'])
      expect(open(publicDoc, path)).toEqual([])
    expect(open(adminDoc, '/healthz')).toEqual([])
    expect(open(adminDoc, '/metrics')).toBeUndefined() // the document's admin token
  })

  it('the admin document is behind the admin token', async () => {
    await check('admin', 'GET /openapi.json', { url: '/openapi.json' }, 401)
  })
})

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

describe("passkey options and the operator's passkey API (issue 30)", () => {
  it('answers as documented', async () => {
    const s = await seed(t)
    const browser = new Browser(t.app)
    const login = await browser.get('/login')
    const preSession = hiddenField(login.body, 'csrf_token')
    const signIn = 'POST /api/passkeys/sign-in-options'
    const json = { 'content-type': 'application/json' }
    await check('public', signIn, { url: '/api/passkeys/sign-in-options', headers: json, payload: '{}' }, 403)
    await check(
      'public',
      signIn,
      {
        url: '/api/passkeys/sign-in-options',
        headers: { ...json, cookie: browser.jar.header(), 'x-csrf-token': preSession },
        payload: '{}',
      },
      200,
    )
    // A reset link's page: a passwordless account's link (the flag set directly: only it matters here).
    const reset = 'POST /api/passkeys/reset-options'
    const withPreSession = { ...json, cookie: browser.jar.header(), 'x-csrf-token': preSession }
    const resetUrl = '/api/passkeys/reset-options'
    await check('public', reset, { url: resetUrl, headers: json, payload: '{"token":"x"}' }, 403)
    await check('public', reset, { url: resetUrl, headers: withPreSession, payload: '{"token":"x"}' }, 404)
    const passwordless = await seed(t)
    await t.database.db
      .updateTable('users')
      .set({ password_sign_in: false })
      .where('id', '=', passwordless.user.id)
      .execute()
    const token = new URL((await t.services.users.issueResetLink(passwordless.user.id)).url).searchParams.get(
      'token',
    )
    await check(
      'public',
      reset,
      { url: resetUrl, headers: withPreSession, payload: JSON.stringify({ token }) },
      200,
    )
    await browser.signIn(s.email, PASSWORD)
    const page = await browser.get('/account/passkeys')
    const csrf = hiddenField(page.body, 'csrf_token')
    const signedIn = { ...json, cookie: browser.jar.header() }
    for (const [op, url] of [
      ['POST /api/account/passkeys/options', '/api/account/passkeys/options'],
      ['POST /api/account/passkeys/confirm-options', '/api/account/passkeys/confirm-options'],
    ] as const) {
      await check('public', op, { url, headers: signedIn, payload: '{}' }, 403)
      await check('public', op, { url, headers: { ...signedIn, 'x-csrf-token': csrf }, payload: '{}' }, 200)
    }
    const list = 'GET /admin/users/{id}/passkeys'
    await check('admin', list, { url: `/admin/users/${s.user.id}/passkeys`, headers: adminHeaders }, 200)
    await check('admin', list, { url: '/admin/users/nope/passkeys', headers: adminHeaders }, 400)
    await check(
      'admin',
      list,
      { url: '/admin/users/00000000-0000-4000-8000-000000000000/passkeys', headers: adminHeaders },
      404,
    )
    await check(
      'admin',
      'DELETE /admin/users/{id}/passkeys/{passkey_id}',
      {
        url: `/admin/users/${s.user.id}/passkeys/00000000-0000-4000-8000-000000000000`,
        headers: adminHeaders,
      },
      404,
    )
  })
})

describe('admin listener answers match the document', () => {
  it('clients', async () => {
    const created = await check(
      'admin',
      'POST /admin/clients',
      {
        url: '/admin/clients',
        headers: adminHeaders,
        payload: { name: 'Doc App', redirect_uris: ['https://doc.example/cb'] },
      },
      201,
    )
    const id = created.json().client_id as string
    await check(
      'admin',
      'POST /admin/clients',
      {
        url: '/admin/clients',
        headers: adminHeaders,
        payload: { name: 'x', redirect_uris: ['http://evil.example/'] },
      },
      400,
    )
    await check('admin', 'POST /admin/clients', { url: '/admin/clients', payload: {} }, 401)
    await check('admin', 'GET /admin/clients', { url: '/admin/clients', headers: adminHeaders }, 200)
    await check(
      'admin',
      'GET /admin/clients/{id}',
      { url: `/admin/clients/${id}`, headers: adminHeaders },
      200,
    )
    await check(
      'admin',
      'GET /admin/clients/{id}',
      { url: '/admin/clients/nobody', headers: adminHeaders },
      404,
    )
    await check(
      'admin',
      'DELETE /admin/clients/{id}',
      { url: `/admin/clients/${id}`, headers: adminHeaders },
      200,
    )
    await check(
      'admin',
      'DELETE /admin/clients/{id}',
      { url: '/admin/clients/nobody', headers: adminHeaders },
      404,
    )
  })

  it('client lifecycle: update, enable', async () => {
    const created = await check(
      'admin',
      'POST /admin/clients',
      {
        url: '/admin/clients',
        headers: adminHeaders,
        payload: {
          name: 'Lifecycle App',
          redirect_uris: ['https://life.example/cb'],
          scopes: ['links:read'],
        },
      },
      201,
    )
    const url = `/admin/clients/${created.json().client_id as string}`
    const patch = (payload: object, status: number, at = url) =>
      check('admin', 'PATCH /admin/clients/{id}', { url: at, headers: adminHeaders, payload }, status)
    await patch({ description: 'Keeps your links tidy.', homepage_url: 'https://life.example/' }, 200)
    await patch({ scopes: ['links:read', 'links:write'] }, 200)
    await patch({ scopes: ['links:read'] }, 200)
    await patch({ homepage_url: 'http://life.example/' }, 400)
    await patch({}, 400)
    await patch({ name: 'x' }, 404, '/admin/clients/nobody')
    await check('admin', 'PATCH /admin/clients/{id}', { url, payload: { name: 'x' } }, 401)
    await check('admin', 'DELETE /admin/clients/{id}', { url, headers: adminHeaders }, 200)
    const enable = (at: string, status: number) =>
      check('admin', 'POST /admin/clients/{id}/enable', { url: at, headers: adminHeaders }, status)
    await enable(`${url}/enable`, 200)
    await enable('/admin/clients/nobody/enable', 404)
  })

  it('resource-server lifecycle: show, update, disable, enable, rotate the secret, delete', async () => {
    const created = await check(
      'admin',
      'POST /admin/resource-servers',
      {
        url: '/admin/resource-servers',
        headers: adminHeaders,
        payload: { name: 'Life API', resource: 'https://life-api.openapi.example/', scopes: ['links:read'] },
      },
      201,
    )
    const url = `/admin/resource-servers/${created.json().id as string}`
    const none = '/admin/resource-servers/rs_nobody'
    const op = (operation: string, at: string, status: number, payload?: object) =>
      check('admin', operation, { url: at, headers: adminHeaders, ...(payload ? { payload } : {}) }, status)
    await op('GET /admin/resource-servers/{id}', url, 200)
    await op('GET /admin/resource-servers/{id}', none, 404)
    await op('PATCH /admin/resource-servers/{id}', url, 200, { name: 'Life API v2', scopes: ['links:write'] })
    await op('PATCH /admin/resource-servers/{id}', url, 400, { scopes: ['nope'] })
    await op('PATCH /admin/resource-servers/{id}', none, 404, { name: 'x' })
    await op('POST /admin/resource-servers/{id}/disable', `${url}/disable`, 200)
    await op('POST /admin/resource-servers/{id}/disable', `${none}/disable`, 404)
    await op('POST /admin/resource-servers/{id}/enable', `${url}/enable`, 200)
    await op('POST /admin/resource-servers/{id}/enable', `${none}/enable`, 404)
    await op('POST /admin/resource-servers/{id}/secret', `${url}/secret`, 200)
    await op('POST /admin/resource-servers/{id}/secret', `${url}/secret`, 200, { overlap_seconds: 0 })
    await op('POST /admin/resource-servers/{id}/secret', `${url}/secret`, 400, { overlap_seconds: -1 })
    await op('POST /admin/resource-servers/{id}/secret', `${none}/secret`, 404)
    await op('DELETE /admin/resource-servers/{id}', url, 200)
    await op('DELETE /admin/resource-servers/{id}', url, 404)
  })

  it('users', async () => {
    const payload = { email: 'doc-user@example.com', password: 'correct horse battery' }
    const created = await check(
      'admin',
      'POST /admin/users',
      { url: '/admin/users', headers: adminHeaders, payload },
      201,
    )
    await check('admin', 'POST /admin/users', { url: '/admin/users', headers: adminHeaders, payload }, 409)
    await check(
      'admin',
      'POST /admin/users',
      { url: '/admin/users', headers: adminHeaders, payload: { email: 'x' } },
      400,
    )
    await check('admin', 'GET /admin/users', { url: '/admin/users', headers: adminHeaders }, 200)
    const url = `/admin/users/${created.json().id as string}`
    await check('admin', 'DELETE /admin/users/{id}', { url, headers: adminHeaders }, 204)
    await check('admin', 'DELETE /admin/users/{id}', { url, headers: adminHeaders }, 404)
    await check(
      'admin',
      'DELETE /admin/users/{id}',
      { url: '/admin/users/not-a-uuid', headers: adminHeaders },
      400,
    )
  })

  it('users: show, page and search, change email, reset link (issue 18)', async () => {
    const make = (email: string) =>
      check(
        'admin',
        'POST /admin/users',
        { url: '/admin/users', headers: adminHeaders, payload: { email, password: 'correct horse battery' } },
        201,
      )
    const a = (await make('page-a@example.com')).json() as { id: string }
    await make('page-b@example.com')
    const first = await check(
      'admin',
      'GET /admin/users',
      { url: '/admin/users?email_prefix=PAGE-&limit=1', headers: adminHeaders },
      200,
    )
    expect(first.json().users).toHaveLength(1)
    const cursor = first.json().next_cursor as string
    const second = await check(
      'admin',
      'GET /admin/users',
      { url: `/admin/users?email_prefix=page-&limit=1&cursor=${cursor}`, headers: adminHeaders },
      200,
    )
    expect(second.json().users[0].email).toBe('page-b@example.com')
    await check('admin', 'GET /admin/users', { url: '/admin/users?limit=0', headers: adminHeaders }, 400)
    const url = `/admin/users/${a.id}`
    await check('admin', 'GET /admin/users/{id}', { url, headers: adminHeaders }, 200)
    await check(
      'admin',
      'GET /admin/users/{id}',
      { url: '/admin/users/00000000-0000-4000-8000-000000000000', headers: adminHeaders },
      404,
    )
    await check(
      'admin',
      'PATCH /admin/users/{id}',
      { url, headers: adminHeaders, payload: { email: 'page-c@example.com' } },
      200,
    )
    await check(
      'admin',
      'PATCH /admin/users/{id}',
      { url, headers: adminHeaders, payload: { email: 'PAGE-B@example.com' } },
      409,
    )
    await check(
      'admin',
      'PATCH /admin/users/{id}',
      { url, headers: adminHeaders, payload: { email: 'nope' } },
      400,
    )
    await check(
      'admin',
      'PATCH /admin/users/{id}',
      {
        url: '/admin/users/00000000-0000-4000-8000-000000000000',
        headers: adminHeaders,
        payload: { email: 'x@example.com' },
      },
      404,
    )
    await check(
      'admin',
      'POST /admin/users/{id}/reset-link',
      { url: `${url}/reset-link`, headers: adminHeaders },
      201,
    )
    await check(
      'admin',
      'POST /admin/users/{id}/reset-link',
      { url: '/admin/users/00000000-0000-4000-8000-000000000000/reset-link', headers: adminHeaders },
      404,
    )
    await check(
      'admin',
      'POST /admin/users/{id}/reset-link',
      { url: '/admin/users/nope/reset-link', headers: adminHeaders },
      400,
    )
  })

  it("an operator revokes a user's grant to one application (issue 18)", async () => {
    const user = await t.services.users.createUser({
      email: 'grant-doc@example.com',
      password: 'correct horse battery',
    })
    const client = await t.services.clients.createClient({
      name: 'Doc App',
      redirect_uris: ['https://doc.example/cb'],
    })
    await t.services.grants.approveAndIssueCode({
      userId: user.id,
      clientId: client.id,
      redirectUri: 'https://doc.example/cb',
      scopes: ['links:read'],
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    const url = `/admin/users/${user.id}/apps/${client.id}`
    const op = 'DELETE /admin/users/{id}/apps/{client_id}'
    await check('admin', op, { url, headers: adminHeaders }, 204)
    await check('admin', op, { url, headers: adminHeaders }, 404)
    await check('admin', op, { url: `/admin/users/nope/apps/${client.id}`, headers: adminHeaders }, 400)
    await check('admin', op, { url }, 401)
  })

  it('the audit trail (issue 18)', async () => {
    const page = await check(
      'admin',
      'GET /admin/audit',
      { url: '/admin/audit?limit=2', headers: adminHeaders },
      200,
    )
    expect(page.json().events.length).toBeGreaterThan(0)
    await check(
      'admin',
      'GET /admin/audit',
      {
        url: `/admin/audit?type=user.created&type=user.updated&cursor=${page.json().next_cursor as string}`,
        headers: adminHeaders,
      },
      200,
    )
    await check('admin', 'GET /admin/audit', { url: '/admin/audit?type=no.such', headers: adminHeaders }, 400)
    await check('admin', 'GET /admin/audit', { url: '/admin/audit' }, 401)
  })

  it('resource servers, signing keys, housekeeping, health, the document', async () => {
    await check(
      'admin',
      'POST /admin/resource-servers',
      { url: '/admin/resource-servers', headers: adminHeaders, payload: { name: 'Links API' } },
      201,
    )
    await check(
      'admin',
      'POST /admin/resource-servers',
      { url: '/admin/resource-servers', headers: adminHeaders, payload: { name: '' } },
      400,
    )
    const api = { name: 'Shop API', resource: 'https://shop.openapi.example/', scopes: ['products:sync'] }
    const url = '/admin/resource-servers'
    await check('admin', 'POST /admin/resource-servers', { url, headers: adminHeaders, payload: api }, 201)
    await check('admin', 'POST /admin/resource-servers', { url, headers: adminHeaders, payload: api }, 409)
    await check(
      'admin',
      'GET /admin/resource-servers',
      { url: '/admin/resource-servers', headers: adminHeaders },
      200,
    )
    await check('admin', 'POST /admin/keys/rotate', { url: '/admin/keys/rotate', headers: adminHeaders }, 201)
    await check('admin', 'GET /admin/keys', { url: '/admin/keys', headers: adminHeaders }, 200)
    const retired = (await t.services.signingKeys.listKeys()).find((k) => k.retiredAt !== null)!
    const revoke = 'POST /admin/keys/{kid}/revoke'
    const revokeUrl = (kid: string) => ({ url: `/admin/keys/${kid}/revoke`, headers: adminHeaders })
    await check('admin', revoke, revokeUrl(retired.kid), 200)
    await check('admin', revoke, revokeUrl('A'.repeat(43)), 404)
    await check('admin', revoke, revokeUrl('not.a.kid'), 400)
    await check('admin', revoke, { url: `/admin/keys/${retired.kid}/revoke` }, 401)
    await check('admin', 'POST /admin/keys/rekey', { url: '/admin/keys/rekey', headers: adminHeaders }, 200)
    await check('admin', 'POST /admin/keys/rekey', { url: '/admin/keys/rekey' }, 401)
    await check(
      'admin',
      'POST /admin/housekeeping/run',
      { url: '/admin/housekeeping/run', headers: adminHeaders },
      200,
    )
    await check('admin', 'POST /admin/housekeeping/run', { url: '/admin/housekeeping/run' }, 401)
    await check('admin', 'GET /healthz', { url: '/healthz' }, 200)
    await check('admin', 'GET /readyz', { url: '/readyz' }, 200)
    await check('admin', 'GET /openapi.json', { url: '/openapi.json', headers: adminHeaders }, 200)
  })
})

describe('metrics and the parameter limits every route shares', () => {
  it('the admin listener’s /metrics, behind its token', async () => {
    const res = await check('admin', 'GET /metrics', { url: '/metrics', headers: adminHeaders }, 200)
    expect(res.body).toContain('# TYPE')
    await check('admin', 'GET /metrics', { url: '/metrics' }, 401)
  })

  it('a query over the limits is a documented 400 on open GETs too', async () => {
    const query = `?${Array.from({ length: 60 }, (_, i) => `p${i}=1`).join('&')}`
    await check('public', 'GET /healthz', { url: `/healthz${query}` }, 400)
    await check('admin', 'GET /readyz', { url: `/readyz${query}` }, 400)
    await check(
      'public',
      'GET /.well-known/oauth-authorization-server',
      {
        url: `/.well-known/oauth-authorization-server${query}`,
      },
      400,
    )
  })
})

describe('the block list of client_id URLs matches the document', () => {
  it('blocks, lists and unblocks', async () => {
    const url = '/admin/blocked-clients'
    const payload = { client_id: 'https://agent.example/client.json', reason: 'test' }
    await check('admin', 'POST /admin/blocked-clients', { url, headers: adminHeaders, payload }, 201)
    await check('admin', 'POST /admin/blocked-clients', { url, headers: adminHeaders, payload }, 200)
    await check(
      'admin',
      'POST /admin/blocked-clients',
      { url, headers: adminHeaders, payload: { client_id: 'http://x.example/' } },
      400,
    )
    await check('admin', 'POST /admin/blocked-clients', { url, payload }, 401)
    await check('admin', 'GET /admin/blocked-clients', { url, headers: adminHeaders }, 200)
    await check('admin', 'GET /admin/blocked-clients', { url }, 401)
    const one = `${url}?client_id=${encodeURIComponent(payload.client_id)}`
    await check('admin', 'DELETE /admin/blocked-clients', { url: one, headers: adminHeaders }, 204)
    await check('admin', 'DELETE /admin/blocked-clients', { url: one, headers: adminHeaders }, 404)
    await check('admin', 'DELETE /admin/blocked-clients', { url, headers: adminHeaders }, 400)
    await check('admin', 'DELETE /admin/blocked-clients', { url: one }, 401)
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
  it('every route that answers JSON is documented on its own listener', () => {
    for (const [app, doc] of [
      [t.app, publicDoc],
      [t.admin, adminDoc],
    ] as const) {
      const documented = new Set(documentedOperations(doc))
      const missing = registeredRoutes(app).filter((r) => !HTML_ROUTES.has(r) && !documented.has(r))
      expect(missing).toEqual([])
    }
  })

  it('every documented operation exists, or is one being built on another branch', () => {
    expect(documentedOperations(publicDoc).filter((op) => !has(t.app, op) && !COMING.has(op))).toEqual([])
    expect(documentedOperations(adminDoc).filter((op) => !has(t.admin, op))).toEqual([])
  })

  it('every documented operation that exists was checked against a real answer above', () => {
    const unchecked = [
      ...documentedOperations(publicDoc)
        .filter((op) => has(t.app, op))
        .map((op) => `public ${op}`),
      ...documentedOperations(adminDoc).map((op) => `admin ${op}`),
    ].filter((op) => !exercised.has(op))
    expect(unchecked).toEqual([])
  })
})

describe('the checker itself', () => {
  it('reports a body that does not match, an undocumented status and an undocumented media type', () => {
    const fake = (statusCode: number, contentType: string, body: string) =>
      ({ statusCode, headers: { 'content-type': contentType }, body }) as unknown as LightMyRequestResponse
    const op = 'GET /.well-known/oauth-authorization-server'
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', '{"issuer":"x"}'))).toHaveLength(1)
    expect(checkResponse(publicDoc, ajv, op, fake(418, 'application/json', '{}'))).toHaveLength(1)
    const metadata = JSON.stringify(authorizationServerMetadata(t.config))
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'text/plain', metadata))).toHaveLength(1)
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', metadata))).toEqual([])
    const extra = JSON.stringify({ ...authorizationServerMetadata(t.config), undocumented: 1 })
    expect(checkResponse(publicDoc, ajv, op, fake(200, 'application/json', extra))).toHaveLength(1)
  })
})
