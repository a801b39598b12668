import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { authorizeUrl, CHALLENGE, countRows, locationParams, REDIRECT_URI, seed } from '../helpers/browser.js'

let t: TestApp
let s: Awaited<ReturnType<typeof seed>>
let narrow: Awaited<ReturnType<typeof seed>>['client']
beforeAll(async () => {
  // One test address makes more authorize requests than a person does in a minute.
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  s = await seed(t)
  narrow = await t.services.clients.createClient({
    name: 'Read only',
    redirect_uris: [REDIRECT_URI],
    scopes: ['links:read'],
  })
})
afterAll(async () => t.close())

function expectErrorPage(res: Awaited<ReturnType<TestApp['app']['inject']>>, code: string) {
  expect(res.statusCode).toBe(400)
  expect(res.headers.location).toBeUndefined()
  expect(res.headers['content-type']).toMatch(/^text\/html/)
  expect(res.body).toContain(`<code>${code}</code>`)
  expect(res.body).toContain('Go back to the application')
}

describe('client_id and redirect_uri: a page, never a redirect', () => {
  it.each([
    ['an extra path segment', 'https://app.example/callback/extra'],
    ['an added query', 'https://app.example/callback?x=1'],
    ['a changed query', 'https://app.example/cb?mode=evil'],
    ['a removed query', 'https://app.example/cb'],
    ['a trailing slash', 'https://app.example/callback/'],
    ['an upper-case host', 'https://APP.example/callback'],
    ['an upper-case path', 'https://app.example/Callback'],
    ['a fragment', 'https://app.example/callback#x'],
    ['an empty fragment', 'https://app.example/callback#'],
    ['@ with the registered host as user-info', 'https://app.example@evil.example/callback'],
    ['@ with another user-info', 'https://evil.example@app.example/callback'],
    ['..;/ path traversal', 'https://app.example/callback/..;/evil'],
    ['../ path traversal', 'https://app.example/callback/../evil'],
    ['percent-encoded path', 'https://app.example/%63allback'],
    ['a host that starts with the registered host', 'https://app.example.evil.example/callback'],
    ['another port', 'https://app.example:8443/callback'],
    ['the default port spelled out', 'https://app.example:443/callback'],
    ['http instead of https', 'http://app.example/callback'],
    ['a javascript: URI', 'javascript:alert(1)'],
  ])('%s', async (_name, redirectUri) => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, redirect_uri: redirectUri }) })
    expectErrorPage(res, 'invalid_request')
  })

  it('a missing redirect_uri', async () => {
    const { redirect_uri: _omit, ...params } = s.params
    expectErrorPage(await t.app.inject({ url: authorizeUrl(params) }), 'invalid_request')
  })

  it('a repeated redirect_uri, even of registered values', async () => {
    const url = `${authorizeUrl(s.params)}&redirect_uri=${encodeURIComponent('https://app.example/cb?mode=web')}`
    expectErrorPage(await t.app.inject({ url }), 'invalid_request')
  })

  it('a repeated client_id', async () => {
    const url = `${authorizeUrl(s.params)}&client_id=${s.client.id}`
    expectErrorPage(await t.app.inject({ url }), 'invalid_request')
  })

  it('a missing client_id', async () => {
    const { client_id: _omit, ...params } = s.params
    expectErrorPage(await t.app.inject({ url: authorizeUrl(params) }), 'invalid_request')
  })

  it('an unknown client_id', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, client_id: 'no-such-client-0000' }) })
    expectErrorPage(res, 'invalid_client')
  })

  it('a disabled client', async () => {
    const gone = await t.services.clients.createClient({ name: 'Gone', redirect_uris: [REDIRECT_URI] })
    await t.services.clients.disableClient(gone.id)
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, client_id: gone.id }) })
    expectErrorPage(res, 'invalid_client')
  })

  it('is checked before every other parameter', async () => {
    const res = await t.app.inject({
      url: authorizeUrl({
        client_id: s.client.id,
        redirect_uri: 'https://evil.example/cb',
        response_type: 'token',
      }),
    })
    expectErrorPage(res, 'invalid_request')
  })

  it('escapes what it shows', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, client_id: '<script>x</script>' }) })
    expect(res.body).not.toContain('<script>x')
  })
})

describe('other parameter errors go back to the redirect_uri with error, state and iss', () => {
  const expectRedirectError = (
    res: Awaited<ReturnType<TestApp['app']['inject']>>,
    error: string,
    state: string | null = 'xyz-state',
  ) => {
    expect(res.statusCode).toBe(302)
    expect(res.headers.location).toMatch(/^https:\/\/app\.example\/callback\?error=/)
    const params = locationParams(res)
    expect(params.error).toBe(error)
    expect(params.error_description).toBeTruthy()
    expect(params.state).toBe(state ?? undefined)
    expect(params.iss).toBe('http://localhost:3000')
    expect(params.code).toBeUndefined()
  }

  it.each([
    ['repeated scope', '&scope=links:read', 'invalid_request'],
    ['repeated response_type', '&response_type=code', 'invalid_request'],
    ['repeated code_challenge', `&code_challenge=${CHALLENGE}`, 'invalid_request'],
    ['repeated code_challenge_method', '&code_challenge_method=S256', 'invalid_request'],
    ['repeated prompt', '&prompt=consent&prompt=consent', 'invalid_request'],
  ])('%s → %s', async (_name, extra, error) => {
    expectRedirectError(await t.app.inject({ url: authorizeUrl(s.params) + extra }), error)
  })

  it('repeated state → invalid_request without a state', async () => {
    const res = await t.app.inject({ url: `${authorizeUrl(s.params)}&state=other` })
    expectRedirectError(res, 'invalid_request', null)
  })

  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_type=id_token', { response_type: 'id_token' }, 'unsupported_response_type'],
    ['response_type="code id_token"', { response_type: 'code id_token' }, 'unsupported_response_type'],
    ['no code_challenge', { code_challenge: '' }, 'invalid_request'],
    ['42-character code_challenge', { code_challenge: CHALLENGE.slice(0, 42) }, 'invalid_request'],
    ['44-character code_challenge', { code_challenge: `${CHALLENGE}x` }, 'invalid_request'],
    ['code_challenge with +/', { code_challenge: `+/${CHALLENGE.slice(2)}` }, 'invalid_request'],
    ['code_challenge_method=plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['code_challenge_method=S512', { code_challenge_method: 'S512' }, 'invalid_request'],
    ['an unknown scope', { scope: 'links:read admin' }, 'invalid_scope'],
    ['a comma-separated scope', { scope: 'links:read,links:write' }, 'invalid_scope'],
    ['prompt=select_account', { prompt: 'select_account' }, 'invalid_request'],
    ['prompt="none consent"', { prompt: 'none consent' }, 'invalid_request'],
  ])('%s → %s', async (_name, change, error) => {
    expectRedirectError(await t.app.inject({ url: authorizeUrl({ ...s.params, ...change }) }), error)
  })

  it('a scope the client is not registered for → invalid_scope', async () => {
    const res = await t.app.inject({
      url: authorizeUrl({ ...s.params, client_id: narrow.id, scope: 'links:read links:write' }),
    })
    expectRedirectError(res, 'invalid_scope')
  })

  it('a state over 1 KiB → invalid_request, and that state is not echoed', async () => {
    const res = await t.app.inject({
      url: authorizeUrl({ ...s.params, state: 'x'.repeat(1025), response_type: 'x' }),
    })
    expect(locationParams(res).error).toBe('unsupported_response_type')
    const long = await t.app.inject({ url: authorizeUrl({ ...s.params, state: 'x'.repeat(1025) }) })
    expectRedirectError(long, 'invalid_request', null)
  })

  it('echoes an unusual state exactly', async () => {
    const state = 'a b&c=d?e#f/ü+%20'
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, state, response_type: 'token' }) })
    expectRedirectError(res, 'unsupported_response_type', state)
  })

  it('omits state when the request had none', async () => {
    const { state: _omit, ...params } = s.params
    const res = await t.app.inject({ url: authorizeUrl({ ...params, response_type: 'token' }) })
    expect(Object.keys(locationParams(res))).toEqual(['error', 'error_description', 'iss'])
  })

  it('appends to a registered redirect_uri that has a query', async () => {
    const res = await t.app.inject({
      url: authorizeUrl({
        ...s.params,
        redirect_uri: 'https://app.example/cb?mode=web',
        response_type: 'token',
      }),
    })
    expect(res.headers.location).toMatch(
      /^https:\/\/app\.example\/cb\?mode=web&error=unsupported_response_type&/,
    )
    expect(locationParams(res)).toMatchObject({ mode: 'web', state: 'xyz-state' })
  })

  it('uses the https issuer as iss', async () => {
    const https = await buildTestApp({ env: { ISSUER: 'https://auth.example' }, database: t.database })
    try {
      const res = await https.app.inject({ url: authorizeUrl({ ...s.params, response_type: 'token' }) })
      expect(locationParams(res).iss).toBe('https://auth.example')
    } finally {
      await https.app.close()
      await https.admin.close()
    }
  })
})

describe('a valid request', () => {
  it.each([
    ['all parameters', {}],
    ['no response_type', { response_type: '' }],
    ['no code_challenge_method (S256)', { code_challenge_method: '' }],
    ['scopes in another order', { scope: 'links:write links:read' }],
    ['an unknown extra parameter', { foo: 'bar', nonce: 'n' }],
    ['the other registered redirect_uri', { redirect_uri: 'https://app.example/cb?mode=web' }],
  ])('with %s goes to sign-in and grants nothing', async (_name, change) => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, ...change }) })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toMatch(/^\/login\?request=[A-Za-z0-9_-]{22}$/)
    expect(await countRows(t)).toEqual({ grants: 0, codes: 0 })
  })

  it('keeps the request server-side, scopes in table order', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, scope: 'links:write links:read' }) })
    const id = new URL(res.headers.location as string, 'http://x').searchParams.get('request')!
    const row = await t.database.db
      .selectFrom('pending_authorizations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({
      client_id: s.client.id,
      redirect_uri: REDIRECT_URI,
      scopes: ['links:read', 'links:write'],
      state: 'xyz-state',
      code_challenge: CHALLENGE,
      completed_at: null,
    })
    expect(res.headers['set-cookie']).toBeUndefined()
  })

  it('prompt=none without a session → login_required through the redirect', async () => {
    const res = await t.app.inject({ url: authorizeUrl({ ...s.params, prompt: 'none' }) })
    expect(res.statusCode).toBe(302)
    expect(locationParams(res)).toMatchObject({
      error: 'login_required',
      state: 'xyz-state',
      iss: 'http://localhost:3000',
    })
  })
})
