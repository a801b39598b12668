import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import {
  authorizeUrl,
  Browser,
  CHALLENGE,
  hiddenField,
  PASSWORD,
  REDIRECT_URI,
  seed,
  VERIFIER,
} from '../helpers/browser.js'
import { exchangeCode, mintCode, type Party } from '../helpers/fixtures.js'
import {
  asNodeHeaders,
  contentTypes,
  formEncode,
  jsonBody,
  mutatedPairs,
  type Pair,
  pairsFor,
} from '../helpers/hostile.js'
import { expectInvariants } from '../helpers/invariants.js'
import { basicAuth, createResourceServer } from '../helpers/tokens.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'

/**
 * Property-based tests over every public endpoint: fast-check generates requests with plausible and
 * hostile parameters (repeated, badly percent-encoded, invalid UTF-8, huge, arrays and objects where
 * strings belong), bodies of every content type, and repeated headers. Whatever arrives:
 * - never a 5xx;
 * - a redirect goes to one of our own pages, or to a redirect_uri registered for the client in question;
 * - an error is the right kind for its endpoint: RFC 6749/7009/7662 JSON with a registered code and
 *   its status on OAuth endpoints, RFC 9457 problem details on JSON APIs, a page in the browser;
 * - every answer carries the security headers, and no page reflects markup it was sent.
 */

const OTHER_REDIRECT_URI = 'https://other.example/cb'
let t: TestApp
let ctx: Awaited<ReturnType<typeof prepare>>

async function prepare() {
  const a = await seed(t)
  const b = await t.services.clients.createClient({ name: 'Other App', redirect_uris: [OTHER_REDIRECT_URI] })
  const grant = await upsertGrant(
    t.database.db,
    { userId: a.user.id, clientId: a.client.id, scopes: ['links:read'] },
    t.clock.now(),
  )
  const party: Party = { userId: a.user.id, client: a.client, grant }
  const browser = new Browser(t.app)
  // A pending request on its consent page, signed in: its id and CSRF token are plausible values.
  const started = await browser.get(authorizeUrl({ ...a.params, scope: 'links:read links:write' }))
  const pendingId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
  await browser.signIn(a.email, PASSWORD, pendingId)
  const consent = await browser.get(`/oauth/authorize/continue?request=${pendingId}`)
  const accountApi = await browser.get('/api/account/apps')
  // The sign-in form's token for this browser's CSRF cookie, as a signed-out page shows it.
  const loginCsrfCookie = browser.jar.cookies.get('linkauth_login_csrf')!
  const signInPage = await t.app.inject({
    url: '/login',
    headers: { cookie: `linkauth_login_csrf=${loginCsrfCookie}` },
  })
  const loginCsrf = hiddenField(signInPage.body, 'csrf_token')
  const rs = await createResourceServer(t)
  for (const api of [LINKS_API, SHOP_API]) await registerApi(t, api)
  const tokens = await exchangeCode(t, party)
  const codes = await Promise.all([1, 2, 3].map(() => mintCode(t, party)))
  return {
    a,
    b,
    party,
    pendingId,
    consentCsrf: hiddenField(consent.body, 'csrf_token'),
    accountCsrf: (accountApi.json() as { csrf_token: string }).csrf_token,
    sessionCookie: `linkauth_session=${browser.jar.cookies.get('linkauth_session')}`,
    loginCsrfCookie,
    loginCsrf,
    rs,
    tokens,
    codes,
    clients: [a.client, b] as const,
  }
}

beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  ctx = await prepare()
}, 60_000)
afterAll(async () => t.close())

interface Endpoint {
  method: string
  path: string | ((c: typeof ctx) => fc.Arbitrary<string>)
  /** Plausible values of each known parameter (any of them may also get a hostile one). */
  query?: (c: typeof ctx) => Record<string, readonly string[]>
  body?: (c: typeof ctx) => Record<string, readonly string[]>
  /** A valid request's parameters, which mutations start from. */
  valid?: (c: typeof ctx) => Record<string, string>
}

const clientIds = (c: typeof ctx) => [c.a.client.id, c.b.id, 'unknown-client-id', 'a\u0000b']
const redirectUris = (c: typeof ctx) => [
  ...c.a.client.redirectUris,
  OTHER_REDIRECT_URI,
  `${REDIRECT_URI}/`,
  `${REDIRECT_URI}?x=1`,
  REDIRECT_URI.toUpperCase(),
  'https://evil.example/callback',
]
const scopes = ['links:read', 'links:read links:write', 'products:sync', 'openid', 'links:read  links:write']
/** RFC 8707 resource indicators: registered, misspelt, relative, with a fragment, off-loopback http, huge. */
const resources = [
  LINKS_API.resource,
  SHOP_API.resource,
  `${LINKS_API.resource}/`,
  `${LINKS_API.resource}#frag`,
  '/api',
  'http://links.example/api',
  'urn:x:y',
  `https://links.example/${'a'.repeat(2100)}`,
]

const ENDPOINTS: Endpoint[] = [
  {
    method: 'GET',
    path: '/oauth/authorize',
    query: (c) => ({
      client_id: clientIds(c),
      redirect_uri: redirectUris(c),
      response_type: ['code', 'token', 'code id_token'],
      scope: scopes,
      state: ['xyz', 'a'.repeat(1025)],
      code_challenge: [CHALLENGE, VERIFIER],
      code_challenge_method: ['S256', 'plain', 's256'],
      prompt: ['none', 'login', 'consent', 'none login', 'select_account'],
      resource: resources,
    }),
    valid: (c) => ({ ...c.a.params, scope: 'links:read' }),
  },
  {
    // The same, starting from a valid request that names a registered API (RFC 8707).
    method: 'GET',
    path: '/oauth/authorize',
    query: () => ({ resource: resources, scope: scopes }),
    valid: (c) => ({ ...c.a.params, scope: 'links:read', resource: LINKS_API.resource }),
  },
  {
    method: 'POST',
    path: '/api/oauth/token',
    body: (c) => ({ resource: resources, refresh_token: [c.tokens.refresh_token], scope: scopes }),
    valid: (c) => ({
      grant_type: 'refresh_token',
      refresh_token: c.tokens.refresh_token,
      client_id: c.a.client.id,
      resource: LINKS_API.resource,
    }),
  },
  {
    method: 'GET',
    path: '/oauth/authorize/continue',
    query: (c) => ({ request: [c.pendingId] }),
    valid: (c) => ({ request: c.pendingId }),
  },
  {
    method: 'POST',
    path: '/oauth/authorize',
    body: (c) => ({
      request: [c.pendingId],
      csrf_token: [c.consentCsrf, c.accountCsrf, c.loginCsrf],
      decision: ['allow', 'deny', 'Allow'],
    }),
    valid: (c) => ({ request: c.pendingId, csrf_token: c.consentCsrf, decision: 'allow' }),
  },
  {
    method: 'GET',
    path: '/login',
    query: (c) => ({ request: [c.pendingId], next: ['account-apps'] }),
    valid: (c) => ({ request: c.pendingId }),
  },
  {
    method: 'POST',
    path: '/login',
    body: (c) => ({
      email: [c.a.email, c.a.email.toUpperCase()],
      password: [PASSWORD],
      csrf_token: [c.loginCsrf],
      request: [c.pendingId],
      next: ['account-apps'],
    }),
    valid: (c) => ({ email: c.a.email, password: PASSWORD, csrf_token: c.loginCsrf, request: c.pendingId }),
  },
  { method: 'POST', path: '/logout', body: (c) => ({ csrf_token: [c.accountCsrf], request: [c.pendingId] }) },
  ...(['authorization_code', 'refresh_token', 'client_credentials', 'password'] as const).map(
    (grantType): Endpoint => ({
      method: 'POST',
      path: '/api/oauth/token',
      body: (c) => ({
        grant_type: [grantType],
        // Plausible codes, but never with their own verifier: the exchange model below owns that.
        code: c.codes.map((m) => m.code),
        code_verifier: [VERIFIER, CHALLENGE],
        client_id: clientIds(c),
        redirect_uri: redirectUris(c),
        refresh_token: [c.tokens.refresh_token],
        scope: scopes,
        resource: resources,
      }),
      valid: (c): Record<string, string> =>
        grantType === 'refresh_token'
          ? { grant_type: grantType, refresh_token: c.tokens.refresh_token, client_id: c.a.client.id }
          : {
              grant_type: grantType,
              code: c.codes[0]!.code,
              code_verifier: VERIFIER,
              client_id: c.a.client.id,
            },
    }),
  ),
  {
    method: 'POST',
    path: '/api/oauth/revoke',
    body: (c) => ({
      token: [c.tokens.access_token, c.tokens.refresh_token],
      token_type_hint: ['access_token', 'refresh_token', 'id_token'],
      client_id: clientIds(c),
    }),
    valid: (c) => ({ token: c.tokens.access_token, client_id: c.a.client.id }),
  },
  {
    method: 'POST',
    path: '/api/oauth/introspect',
    body: (c) => ({
      token: [c.tokens.access_token, c.tokens.refresh_token],
      token_type_hint: ['access_token', 'refresh_token'],
    }),
    valid: (c) => ({ token: c.tokens.access_token }),
  },
  { method: 'GET', path: '/.well-known/oauth-authorization-server' },
  { method: 'GET', path: '/.well-known/jwks.json' },
  { method: 'GET', path: '/account/apps', query: (c) => ({ revoked: clientIds(c) }) },
  {
    method: 'POST',
    path: (c) =>
      fc.constantFrom(...clientIds(c), '%E0%A4%A', 'x'.repeat(300)).map((id) => `/account/apps/${id}/revoke`),
    body: (c) => ({ csrf_token: [c.accountCsrf, c.consentCsrf] }),
    valid: (c) => ({ csrf_token: c.accountCsrf }),
  },
  { method: 'GET', path: '/api/account/apps' },
  {
    method: 'DELETE',
    path: (c) =>
      fc.constantFrom(...clientIds(c), '%ZZ', 'x'.repeat(300)).map((id) => `/api/account/apps/${id}`),
  },
  { method: 'GET', path: '/openapi.json' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/static/style.css' },
  {
    method: 'GET',
    path: () =>
      fc.constantFrom(
        '/',
        '/nope',
        '/api/nope',
        '/api/oauth/nope',
        '/api/oauth/token/',
        '/API/OAUTH/TOKEN',
        '/.well-known/nope',
        '/oauth/authorize/',
        '/account',
        '/static/../app.ts',
        '/%',
        '/%E0%A4%A',
        '//evil.example',
      ),
  },
]

interface Sent {
  method: string
  url: string
  path: string
  headers: Record<string, string>
  payload?: string
  /** Every parameter value sent (decoded, as generated), by name. */
  values: Map<string, string[]>
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const

/** A whole request to one endpoint: method, path, query, body, content type, cookies and headers. */
function requestFor(endpoint: Endpoint): fc.Arbitrary<Sent> {
  const path = typeof endpoint.path === 'string' ? fc.constant(endpoint.path) : endpoint.path(ctx)
  const params = (known: Record<string, readonly string[]> | undefined): fc.Arbitrary<Pair[]> => {
    const valid = endpoint.valid?.(ctx)
    return known && valid
      ? fc.oneof(
          { weight: 3, arbitrary: mutatedPairs(valid, known) },
          { weight: 1, arbitrary: pairsFor(known) },
        )
      : pairsFor(known ?? {})
  }
  const query = params(endpoint.query?.(ctx))
  const bodyPairs = params(endpoint.body?.(ctx))
  const cookie = fc.subarray([
    ctx.sessionCookie,
    `linkauth_login_csrf=${ctx.loginCsrfCookie}`,
    'linkauth_session=%ZZ',
    'x=1',
  ])
  const otherHeaders = fc.array(
    fc.oneof(
      fc.constantFrom<[string, string]>(
        ['x-csrf-token', ctx.accountCsrf],
        ['x-csrf-token', 'forged'],
        ['authorization', basicAuth(ctx.rs.id, ctx.rs.secret)],
        ['authorization', basicAuth(ctx.rs.id, 'wrong')],
        ['authorization', 'Bearer abc'],
        ['authorization', 'Basic %%%'],
        ['content-type', 'text/plain'],
        ['accept', 'application/json'],
        ['if-none-match', '*'],
        ['x-forwarded-for', '1.2.3.4'],
      ),
      fc.tuple(
        fc.constantFrom('x-csrf-token', 'authorization', 'cookie'),
        fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
      ),
    ),
    { maxLength: 4 },
  )
  return fc
    .record({
      method: fc.oneof({ weight: 5, arbitrary: fc.constant(endpoint.method) }, fc.constantFrom(...METHODS)),
      path,
      query,
      bodyPairs,
      bodyKind: fc.constantFrom('form', 'form', 'form', 'json', 'none', 'junk'),
      formType: fc.oneof(
        { weight: 4, arbitrary: fc.constant('application/x-www-form-urlencoded') },
        contentTypes,
      ),
      jsonType: fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, contentTypes),
      cookie,
      otherHeaders,
    })
    .chain((r) =>
      (r.bodyKind === 'json' ? jsonBody(r.bodyPairs) : fc.constant(undefined)).map((json) => {
        const payload =
          r.bodyKind === 'form'
            ? formEncode(r.bodyPairs)
            : r.bodyKind === 'json'
              ? json
              : r.bodyKind === 'junk'
                ? '\u0000\uFFFF{=&=%'
                : undefined
        const lines: [string, string][] = []
        if (payload !== undefined)
          lines.push(['content-type', r.bodyKind === 'json' ? r.jsonType : r.formType])
        // POST /login with the session cookie and right credentials would end the session the other
        // runs use; signing in is exercised without it.
        const cookies =
          r.path === '/login' && r.method === 'POST'
            ? r.cookie.filter((c) => c !== ctx.sessionCookie)
            : r.cookie
        for (const c of cookies) lines.push(['cookie', c])
        lines.push(...r.otherHeaders)
        const values = new Map<string, string[]>()
        for (const [n, v] of [...r.query, ...r.bodyPairs]) values.set(n, [...(values.get(n) ?? []), v])
        const qs = formEncode(r.query)
        return {
          method: r.method,
          url: qs ? `${r.path}?${qs}` : r.path,
          path: r.path,
          headers: asNodeHeaders(lines),
          ...(payload !== undefined && r.method !== 'GET' && r.method !== 'HEAD' ? { payload } : {}),
          values,
        }
      }),
    )
}

const anyRequest = fc.constantFrom(...ENDPOINTS).chain(requestFor)

const OAUTH_CODES: Record<string, Record<string, number[]>> = {
  // RFC 6749 §5.2
  '/api/oauth/token': {
    invalid_request: [400, 404, 405, 413, 415],
    invalid_client: [401],
    invalid_grant: [400],
    unauthorized_client: [400],
    unsupported_grant_type: [400],
    invalid_scope: [400],
    // RFC 8707 §2
    invalid_target: [400],
  },
  // RFC 7009 §2.2.1: §5.2 plus unsupported_token_type
  '/api/oauth/revoke': {
    invalid_request: [400, 404, 405, 413, 415],
    invalid_client: [401],
    unsupported_token_type: [400],
  },
  // RFC 7662 §2.3
  '/api/oauth/introspect': { invalid_request: [400, 404, 405, 413, 415], invalid_client: [401] },
}
const OWN_PATHS = new Set(['/login', '/oauth/authorize/continue', '/account/apps'])

function separatorFor(uri: string): string {
  return !uri.includes('?') ? '?' : /[?&]$/.test(uri) ? '' : '&'
}

/** Every way an answer breaks the rules above; empty when it keeps them all. */
function violations(sent: Sent, res: LightMyRequestResponse): string[] {
  const problems: string[] = []
  const status = res.statusCode
  const type = String(res.headers['content-type'] ?? '')
  const body = res.body
  if (status >= 500) problems.push(`status ${status}`)
  if (res.headers['referrer-policy'] !== 'no-referrer') problems.push('no Referrer-Policy')
  if (res.headers['x-content-type-options'] !== 'nosniff') problems.push('no X-Content-Type-Options')
  if (!String(res.headers['content-security-policy']).includes("frame-ancestors 'none'"))
    problems.push('no CSP')
  if (/node_modules|at \S+\.(ts|js):\d+|FST_ERR|Error: /.test(body)) problems.push('internals in the body')
  // The one script a page may carry is our own passkey glue (src/web/layout.ts); any other is reflected.
  const ownScript = '<script src="/static/passkeys.js" defer></script>'
  if (/<script|<img src=x/i.test(body.replaceAll(ownScript, ''))) problems.push('markup reflected')

  if (status >= 300 && status < 400 && status !== 304) {
    const location = String(res.headers.location ?? '')
    if (location.startsWith('/')) {
      const own = new URL(location, 'http://own.example')
      if (location.startsWith('//') || location.startsWith('/\\') || !OWN_PATHS.has(own.pathname))
        problems.push(`redirect to ${location}`)
    } else {
      // To a client: only to a redirect_uri registered for the client this request is about.
      const sentIds = sent.values.get('client_id') ?? []
      const about =
        sent.path === '/oauth/authorize' && sent.method === 'GET'
          ? ctx.clients.filter((c) => sentIds.includes(c.id))
          : [ctx.a.client] // pending requests, sign-in and consent are all client A's here
      const registered = about.flatMap((c) => c.redirectUris)
      if (!registered.some((uri) => location.startsWith(`${uri}${separatorFor(uri)}`)))
        problems.push(`redirect to ${location}`)
      else if (new URL(location).searchParams.get('iss') !== 'http://localhost:3000') problems.push('no iss')
    }
  }

  if (status < 400 || sent.method === 'HEAD') return problems
  if (status === 405 && !res.headers.allow) problems.push('405 without Allow')
  const codes = OAUTH_CODES[sent.path]
  if (sent.path.startsWith('/api/oauth/')) {
    if (!type.startsWith('application/json')) return [...problems, `OAuth error as ${type}`]
    const json = res.json() as Record<string, unknown>
    const allowed = codes ?? { invalid_request: [400, 404, 405, 413, 414, 415] }
    const statuses = allowed[String(json.error)]
    if (!statuses) problems.push(`error code ${String(json.error)}`)
    else if (!statuses.includes(status)) problems.push(`${String(json.error)} with ${status}`)
    if (Object.keys(json).some((k) => k !== 'error' && k !== 'error_description'))
      problems.push('extra members')
    if (json.error_description !== undefined && typeof json.error_description !== 'string')
      problems.push('error_description not a string')
    if (json.error === 'invalid_client' && !res.headers['www-authenticate'])
      problems.push('no WWW-Authenticate')
    if (codes && res.headers['cache-control'] !== 'no-store') problems.push('cacheable error')
  } else if (
    sent.path.startsWith('/api/') ||
    sent.path.startsWith('/.well-known/') ||
    ['/openapi.json', '/healthz', '/readyz'].includes(sent.path)
  ) {
    if (!type.startsWith('application/problem+json')) return [...problems, `API error as ${type}`]
    const json = res.json() as { type?: unknown; title?: unknown; status?: unknown }
    if (json.status !== status || typeof json.title !== 'string' || typeof json.type !== 'string')
      problems.push('malformed problem')
  } else if (!type.startsWith('text/html') || !/<h1/.test(body)) {
    problems.push(`page error as ${type}`)
  }
  return problems
}

async function send(sent: Sent): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: sent.method as 'GET',
    url: sent.url,
    headers: sent.headers,
    ...(sent.payload !== undefined ? { payload: sent.payload } : {}),
  })
}

describe('every public endpoint, whatever it is sent', () => {
  it('never a 5xx, never an unregistered redirect, always the right kind of error', async () => {
    await fc.assert(
      fc.asyncProperty(anyRequest, async (sent) => {
        const res = await send(sent)
        expect(violations(sent, res), `${sent.method} ${sent.url.slice(0, 300)}`).toEqual([])
        // A token is issued here only by rotating the one refresh token this property knows.
        if (sent.path === '/api/oauth/token' && res.statusCode === 200)
          expect(sent.values.get('refresh_token')).toContain(ctx.tokens.refresh_token)
      }),
      { numRuns: 300 },
    )
    await expectInvariants(t.database.db)
  }, 120_000)
})
