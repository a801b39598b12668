import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField, PASSWORD, seed, VERIFIER } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { jwtClaims, tokenRequest } from '../helpers/fixtures.js'
import { LINKS_API, registerApi, setApiDisabled, SHOP_API } from '../helpers/resource-apis.js'

const clock = createTestClock(new Date('2026-03-01T10:00:00.000Z'))
const OTHER_API = { name: 'Other API', resource: 'http://127.0.0.1:4100/', scopes: ['links:read'] }
let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
beforeAll(async () => {
  t = await buildTestApp({ clock, env: GENEROUS_LIMITS })
  s = await seed(t)
  for (const api of [LINKS_API, SHOP_API, OTHER_API]) await registerApi(t, api)
})
afterAll(async () => t.close())
beforeEach(async () => {
  await t.database.db.deleteFrom('authorization_codes').execute()
  await t.database.db.deleteFrom('grants').execute()
  await t.database.db.updateTable('resource_servers').set({ disabled_at: null }).execute()
})

/** The authorization URL with `resource` once per value (RFC 8707 §2: repeatable). */
function authorizeUrl(resources: string[], overrides: Record<string, string> = {}) {
  const query = new URLSearchParams({ ...s.params, scope: 'links:read ecommerce:write', ...overrides })
  for (const resource of resources) query.append('resource', resource)
  return `/oauth/authorize?${query}`
}

/** Signs in on a request and lands on what follows (the consent page or a redirect). */
async function start(url: string, browser = new Browser(t.app)) {
  const started = await browser.get(url)
  if (started.statusCode !== 303) return { browser, next: started }
  const requestId = new URL(String(started.headers.location), 'http://x').searchParams.get('request')!
  const signedIn = await browser.signIn(s.email, PASSWORD, requestId)
  return { browser, next: await browser.get(String(signedIn.headers.location)) }
}

async function allow(browser: Browser, consent: { body: string }) {
  const decided = await browser.post('/oauth/authorize', {
    request: hiddenField(consent.body, 'request'),
    csrf_token: hiddenField(consent.body, 'csrf_token'),
    decision: 'allow',
  })
  expect(decided.statusCode).toBe(303)
  return new URL(String(decided.headers.location)).searchParams.get('code')!
}

/** A code for `resources`, through sign-in and consent (or consent remembered). */
async function codeFor(resources: string[], overrides: Record<string, string> = {}) {
  const { browser, next } = await start(authorizeUrl(resources, overrides))
  if (next.statusCode === 302)
    return { browser, code: new URL(String(next.headers.location)).searchParams.get('code')! }
  expect(next.statusCode).toBe(200)
  return { browser, code: await allow(browser, next) }
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  tokenRequest(t, {
    grant_type: 'authorization_code',
    code,
    code_verifier: VERIFIER,
    client_id: s.client.id,
    ...extra,
  })
const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: s.client.id,
    ...extra,
  })

describe('resource at /oauth/authorize (RFC 8707 §2)', () => {
  it.each([
    ['relative', ['/api']],
    ['with a fragment', [`${LINKS_API.resource}#x`]],
    ['longer than 2048 characters', [`https://links.example/${'a'.repeat(2040)}`]],
    ['repeated', [LINKS_API.resource, LINKS_API.resource]],
    ['unregistered', ['https://unknown.example/api']],
    ['registered but differently spelled', [`${LINKS_API.resource}/`]],
    ['among valid ones, unregistered', [LINKS_API.resource, 'https://unknown.example/api']],
  ])('%s: redirects with invalid_target, state and iss', async (_why, resources) => {
    const res = await new Browser(t.app).get(authorizeUrl(resources))
    expect(res.statusCode).toBe(302)
    const location = new URL(String(res.headers.location))
    expect(`${location.origin}${location.pathname}`).toBe(s.params.redirect_uri)
    expect(location.searchParams.get('error')).toBe('invalid_target')
    expect(location.searchParams.get('state')).toBe('xyz-state')
    expect(location.searchParams.get('iss')).toBe(t.config.issuer)
    expect(location.searchParams.get('code')).toBeNull()
  })

  it('refuses a disabled resource server at once', async () => {
    await setApiDisabled(t.database.db, SHOP_API.resource, true)
    const res = await new Browser(t.app).get(authorizeUrl([SHOP_API.resource]))
    expect(new URL(String(res.headers.location)).searchParams.get('error')).toBe('invalid_target')
  })

  it('refuses an API that serves none of the requested scopes with invalid_scope', async () => {
    const res = await new Browser(t.app).get(authorizeUrl([SHOP_API.resource], { scope: 'links:read' }))
    expect(new URL(String(res.headers.location)).searchParams.get('error')).toBe('invalid_scope')
  })

  it('never redirects a bad resource to an unregistered redirect_uri', async () => {
    const url = authorizeUrl(['/api'], { redirect_uri: 'https://evil.example/cb' })
    const res = await new Browser(t.app).get(url)
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
  })

  it('names each API on the consent page, beside the scopes it will get there', async () => {
    const { next } = await start(authorizeUrl([LINKS_API.resource, SHOP_API.resource]))
    expect(next.statusCode).toBe(200)
    expect(next.body).toContain(LINKS_API.name)
    expect(next.body).toContain(SHOP_API.name)
    const apis = next.body.slice(next.body.indexOf('class="apis"'))
    const linksItem = apis.slice(apis.indexOf(LINKS_API.name), apis.indexOf(SHOP_API.name))
    expect(linksItem).toContain('Read your short links')
    expect(linksItem).not.toContain('e-commerce')
    expect(apis.slice(apis.indexOf(SHOP_API.name))).toContain('e-commerce')
  })

  it('remembers consent for the consented resources only, and widens it on the next Allow', async () => {
    const { browser } = await codeFor([LINKS_API.resource])
    const grant = await t.database.db.selectFrom('grants').selectAll().executeTakeFirstOrThrow()
    expect(grant.resources).toEqual([LINKS_API.resource])

    const again = await browser.get(authorizeUrl([LINKS_API.resource], { scope: 'links:read' }))
    expect(again.statusCode).toBe(302)
    expect(new URL(String(again.headers.location)).searchParams.get('code')).toBeTruthy()

    const wider = await browser.get(authorizeUrl([LINKS_API.resource, SHOP_API.resource]))
    expect(wider.statusCode).toBe(200) // a resource the user has not consented to: ask
    await allow(browser, wider)
    const widened = await t.database.db.selectFrom('grants').select('resources').executeTakeFirstOrThrow()
    expect(widened.resources.sort()).toEqual([LINKS_API.resource, SHOP_API.resource].sort())
    const remembered = await browser.get(authorizeUrl([SHOP_API.resource], { scope: 'ecommerce:write' }))
    expect(remembered.statusCode).toBe(302)
    // The connected-apps page and its JSON name the consented APIs.
    const page = await browser.get('/account/apps')
    expect(page.body).toContain(LINKS_API.name)
    expect(page.body).toContain(SHOP_API.resource)
    const json = (await browser.get('/api/account/apps')).json()
    expect(json.apps[0].resources).toEqual(
      expect.arrayContaining([
        { resource: LINKS_API.resource, name: LINKS_API.name },
        { resource: SHOP_API.resource, name: SHOP_API.name },
      ]),
    )
    // Without resource, the fast path still answers at once.
    const plain = await browser.get(authorizeUrl([], { scope: 'links:read' }))
    expect(new URL(String(plain.headers.location)).searchParams.get('code')).toBeTruthy()
  })
})

describe('resource at the token endpoint (RFC 8707 §2.2)', () => {
  it('issues a token per API from one refresh token: aud the API, scope what it serves', async () => {
    const { code } = await codeFor([LINKS_API.resource, SHOP_API.resource])
    const first = await exchange(code, { resource: LINKS_API.resource })
    expect(first.statusCode).toBe(200)
    const links = first.json()
    expect(jwtClaims(links.access_token)).toMatchObject({ aud: LINKS_API.resource, scope: 'links:read' })
    expect(links.scope).toBe('links:read')

    const shop = await refresh(links.refresh_token, { resource: SHOP_API.resource })
    expect(shop.statusCode).toBe(200)
    expect(jwtClaims(shop.json().access_token)).toMatchObject({
      aud: SHOP_API.resource,
      scope: 'ecommerce:write',
    })
    expect(shop.json().scope).toBe('ecommerce:write')

    const back = await refresh(shop.json().refresh_token, { resource: LINKS_API.resource })
    expect(back.statusCode).toBe(200)
    expect(jwtClaims(back.json().access_token)).toMatchObject({ aud: LINKS_API.resource })
    // The refresh tokens keep the grant's scope: a per-API token never narrows the next refresh.
    const stored = await t.database.db.selectFrom('refresh_tokens').select('scopes').execute()
    for (const row of stored) expect(row.scopes).toEqual(['links:read', 'ecommerce:write'])
  })

  it('uses the authorization’s only resource when none is named', async () => {
    const { code } = await codeFor([SHOP_API.resource], { scope: 'ecommerce:write' })
    const res = await exchange(code)
    expect(res.statusCode).toBe(200)
    expect(jwtClaims(res.json().access_token).aud).toBe(SHOP_API.resource)
    const again = await refresh(res.json().refresh_token)
    expect(jwtClaims(again.json().access_token).aud).toBe(SHOP_API.resource)
  })

  it('without resource: every granted scope, for the default audience and every API serving one (RFC 9068 §4)', async () => {
    const { code } = await codeFor([])
    const res = await exchange(code)
    expect(res.statusCode).toBe(200)
    expect(res.json().scope).toBe('links:read ecommerce:write')
    expect(jwtClaims(res.json().access_token)).toMatchObject({
      // Sorted: each registered, enabled API serving links:read or ecommerce:write.
      aud: [t.config.accessTokenAudience, OTHER_API.resource, LINKS_API.resource, SHOP_API.resource],
      scope: 'links:read ecommerce:write',
    })
  })

  it('without resource, a refreshed token follows the registry as it is then: APIs disabled or registered since', async () => {
    const { code } = await codeFor([], { scope: 'ecommerce:write' })
    const first = await exchange(code)
    expect(jwtClaims(first.json().access_token).aud).toEqual([
      t.config.accessTokenAudience,
      SHOP_API.resource,
    ])

    await setApiDisabled(t.database.db, SHOP_API.resource, true)
    const disabled = await refresh(first.json().refresh_token)
    expect(disabled.statusCode).toBe(200)
    // No API serves ecommerce:write now: the default audience alone, a string as before.
    expect(jwtClaims(disabled.json().access_token)).toMatchObject({
      aud: t.config.accessTokenAudience,
      scope: 'ecommerce:write',
    })

    await setApiDisabled(t.database.db, SHOP_API.resource, false)
    const later = { name: 'Later API', resource: 'https://later.example/api', scopes: ['ecommerce:write'] }
    const { id } = await registerApi(t, later)
    try {
      const registered = await refresh(disabled.json().refresh_token)
      expect(jwtClaims(registered.json().access_token).aud).toEqual([
        t.config.accessTokenAudience,
        later.resource,
        SHOP_API.resource,
      ])
    } finally {
      await t.services.resourceServers.deleteResourceServer(id)
    }
  })

  it('asks the client to name one when the authorization named several', async () => {
    const { code } = await codeFor([LINKS_API.resource, SHOP_API.resource])
    const res = await exchange(code)
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_target')
    expect(res.json().error_description).toMatch(/name one/)
  })

  it.each([
    ['two resources', { resource: [LINKS_API.resource, SHOP_API.resource] }],
    ['a relative resource', { resource: '/api' }],
    ['an unregistered resource', { resource: 'https://unknown.example/api' }],
    ['a resource with a NUL byte', { resource: 'https://links.example/a\u0000b' }],
  ])('refuses %s with invalid_target and leaves the code usable', async (_why, extra) => {
    const { code } = await codeFor([LINKS_API.resource])
    const body = {
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      client_id: s.client.id,
      ...extra,
    }
    for (const encoding of ['form', 'json'] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        ...(encoding === 'form'
          ? {
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              payload: new URLSearchParams(
                Object.entries(body).flatMap(([k, v]) => [v].flat().map((one): [string, string] => [k, one])),
              ).toString(),
            }
          : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
      })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_target')
    }
    expect((await exchange(code)).statusCode).toBe(200)
  })

  it('refuses a resource outside the authorization with invalid_target, at exchange and refresh', async () => {
    const { code } = await codeFor([LINKS_API.resource], { scope: 'links:read' })
    const res = await exchange(code, { resource: OTHER_API.resource })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_target')

    const second = await codeFor([LINKS_API.resource], { scope: 'links:read' })
    const tokens = (await exchange(second.code)).json()
    const refused = await refresh(tokens.refresh_token, { resource: OTHER_API.resource })
    expect(refused.json().error).toBe('invalid_target')
    // The refused refresh did not rotate: the same token still works.
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(200)
  })

  it('refuses a resource for an authorization that named none', async () => {
    const { code } = await codeFor([], { scope: 'links:read' })
    const tokens = (await exchange(code)).json()
    const res = await refresh(tokens.refresh_token, { resource: LINKS_API.resource })
    expect(res.json().error).toBe('invalid_target')
  })

  it('answers invalid_scope when a narrower scope has nothing in common with the API', async () => {
    const { code } = await codeFor([LINKS_API.resource, SHOP_API.resource])
    const tokens = (await exchange(code, { resource: LINKS_API.resource })).json()
    const res = await refresh(tokens.refresh_token, { resource: SHOP_API.resource, scope: 'links:read' })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_scope')
    expect((await refresh(tokens.refresh_token, { resource: SHOP_API.resource })).statusCode).toBe(200)
  })

  it('stops issuing for a disabled resource server at once, named or not', async () => {
    const { code } = await codeFor([LINKS_API.resource, SHOP_API.resource])
    const tokens = (await exchange(code, { resource: LINKS_API.resource })).json()
    const only = await codeFor([SHOP_API.resource], { scope: 'ecommerce:write' })
    await setApiDisabled(t.database.db, SHOP_API.resource, true)
    const named = await refresh(tokens.refresh_token, { resource: SHOP_API.resource })
    expect(named.statusCode).toBe(400)
    expect(named.json().error).toBe('invalid_target')
    expect((await refresh(tokens.refresh_token, { resource: LINKS_API.resource })).statusCode).toBe(200)

    const silent = await exchange(only.code)
    expect(silent.statusCode).toBe(400)
    expect(silent.json().error).toBe('invalid_target')
    // Nothing usable was left behind: the family started by that exchange is revoked.
    const families = await t.database.db
      .selectFrom('refresh_families')
      .select(['revoked_at'])
      .where(sql<boolean>`resources = ${[SHOP_API.resource]}::text[]`)
      .execute()
    expect(families).toHaveLength(1)
    expect(families[0]!.revoked_at).not.toBeNull()
  })
})
