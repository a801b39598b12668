import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => {
  await t.close()
})

function post(url: string, payload: unknown, headers: Record<string, string> = adminHeaders) {
  return t.admin.inject({ method: 'POST', url, payload: payload as object, headers })
}

describe('admin authentication', () => {
  it.each([
    ['no header', {}],
    ['wrong token', { authorization: 'Bearer nope' }],
    ['wrong scheme', { authorization: `Basic ${adminHeaders.authorization.slice(7)}` }],
    ['token with a suffix', { authorization: `${adminHeaders.authorization}x` }],
  ])('refuses %s with 401 problem+json', async (_name, headers) => {
    const res = await t.admin.inject({ method: 'GET', url: '/admin/clients', headers })
    expect(res.statusCode).toBe(401)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/)
    expect(res.json()).toMatchObject({ status: 401, title: 'Unauthorized' })
  })

  it('300 wrong tokens at once from one address: 10 are compared (401), the rest wait (429); 2 audit rows', async () => {
    const clock = createTestClock()
    const limited = await buildTestApp({ clock, database: t.database })
    try {
      const from = (address: string, authorization: string) =>
        limited.admin.inject({
          method: 'GET',
          url: '/admin/clients',
          remoteAddress: address,
          headers: { authorization },
        })
      const rows = () =>
        limited.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('event_type', '=', 'admin.unauthorized')
          .where('client_address', '=', '192.0.2.66')
          .execute()
      const answers = await Promise.all(
        Array.from({ length: 300 }, (_, i) => from('192.0.2.66', `Bearer wrong-${i}`)),
      )
      const statuses = answers.map((r) => r.statusCode)
      expect(statuses.filter((s) => s === 401)).toHaveLength(10)
      expect(statuses.filter((s) => s === 429)).toHaveLength(290)
      const refused = answers.find((r) => r.statusCode === 429)!
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
      // The first failure of the minute, and the one that spent the limit (with the count).
      const recorded = await rows()
      expect(recorded).toHaveLength(2)
      expect(recorded.map((r) => r.details)).toContainEqual(expect.objectContaining({ failures: 10 }))
      // While held, even the right token waits (it is not compared); other addresses are not held.
      expect((await from('192.0.2.66', adminHeaders.authorization)).statusCode).toBe(429)
      expect((await from('192.0.2.67', adminHeaders.authorization)).statusCode).toBe(200)
      clock.advance(60)
      expect((await from('192.0.2.66', adminHeaders.authorization)).statusCode).toBe(200)
      // The right token gives its reservation back: a whole minute of valid calls spends nothing.
      for (let i = 0; i < 20; i++)
        expect((await from('192.0.2.66', adminHeaders.authorization)).statusCode).toBe(200)
      expect((await from('192.0.2.66', 'Bearer wrong')).statusCode).toBe(401)
      expect(await rows()).toHaveLength(3)
    } finally {
      await limited.close()
    }
  })

  it('answers health without a token', async () => {
    const res = await t.admin.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
  })
})

describe('POST /admin/clients', () => {
  it('registers a client with all four scopes by default', async () => {
    const res = await post('/admin/clients', { name: 'Link App', redirect_uris: ['https://app.example/cb'] })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body).toMatchObject({
      name: 'Link App',
      redirect_uris: ['https://app.example/cb'],
      scopes: ['links:read', 'links:write', 'ecommerce:write', 'products:sync'],
      disabled_at: null,
    })
    expect(body.client_id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(new Date(body.created_at).toString()).not.toBe('Invalid Date')
  })

  it('stores redirect URIs exactly as given and scopes in table order', async () => {
    const uris = [
      'http://127.0.0.1:8080/cb?x=1',
      'http://[::1]/cb',
      'http://localhost/cb/',
      'com.example.app:/oauth2redirect',
    ]
    const res = await post('/admin/clients', {
      name: 'Native',
      redirect_uris: uris,
      scopes: ['links:write', 'links:read'],
    })
    expect(res.statusCode).toBe(201)
    expect(res.json().redirect_uris).toEqual(uris)
    expect(res.json().scopes).toEqual(['links:read', 'links:write'])
  })

  it.each([
    [{}, 'name'],
    [{ name: '', redirect_uris: ['https://a.example/cb'] }, 'name'],
    [{ name: 'x'.repeat(101), redirect_uris: ['https://a.example/cb'] }, 'name'],
    [{ name: 'A' }, 'redirect_uris'],
    [{ name: 'A', redirect_uris: [] }, 'redirect_uris'],
    [{ name: 'A', redirect_uris: 'https://a.example/cb' }, 'redirect_uris'],
    [
      { name: 'A', redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      'redirect_uris',
    ],
    [{ name: 'A', redirect_uris: ['https://a.example/cb', 'https://a.example/cb'] }, 'redirect_uris'],
    [{ name: 'A', redirect_uris: ['/relative/cb'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['https://a.example/cb#frag'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['http://a.example/cb'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['javascript:alert(1)'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['data:text/html,hi'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['file:///etc/passwd'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['https://user:pw@a.example/cb'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['myapp:/cb'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: [' https://a.example/cb'] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: [42] }, 'redirect_uris.0'],
    [{ name: 'A', redirect_uris: ['https://a.example/cb'], scopes: ['links:read', 'admin'] }, 'scopes.1'],
    [{ name: 'A', redirect_uris: ['https://a.example/cb'], scopes: [] }, 'scopes'],
  ])('refuses %j with 400 naming %s', async (payload, field) => {
    const res = await post('/admin/clients', payload)
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 400, field })
    expect(res.json().detail).toContain(field)
  })

  it('refuses a body that is not JSON with 400, and an unknown content type with 415', async () => {
    const bad = await t.admin.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      payload: '{"name":',
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/)
    const xml = await t.admin.inject({
      method: 'POST',
      url: '/admin/clients',
      headers: { ...adminHeaders, 'content-type': 'application/xml' },
      payload: '<client/>',
    })
    expect(xml.statusCode).toBe(415)
  })
})

describe('listing, showing and disabling clients', () => {
  it('lists, shows and disables; a second disable keeps the first time', async () => {
    const created = (
      await post('/admin/clients', { name: 'To Disable', redirect_uris: ['https://d.example/cb'] })
    ).json()
    const list = await t.admin.inject({ method: 'GET', url: '/admin/clients', headers: adminHeaders })
    expect(list.json().clients.map((c: { client_id: string }) => c.client_id)).toContain(created.client_id)
    const shown = await t.admin.inject({
      method: 'GET',
      url: `/admin/clients/${created.client_id}`,
      headers: adminHeaders,
    })
    expect(shown.json()).toEqual(created)
    const disabled = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${created.client_id}`,
      headers: adminHeaders,
    })
    expect(disabled.statusCode).toBe(200)
    expect(disabled.json().disabled_at).not.toBeNull()
    const again = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${created.client_id}`,
      headers: adminHeaders,
    })
    expect(again.json().disabled_at).toBe(disabled.json().disabled_at)
    expect(await t.services.clients.findActiveClient(created.client_id)).toBeUndefined()
  })

  it('answers 404 problem+json for an unknown client', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.admin.inject({
        method,
        url: '/admin/clients/unknown-client-id',
        headers: adminHeaders,
      })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ status: 404, title: 'Not Found' })
    }
  })
})

describe('POST /admin/users', () => {
  it('creates a user and refuses the same email in another case with 409', async () => {
    const res = await post('/admin/users', { email: 'Alice@Example.com', password: 'correct horse' })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ email: 'Alice@Example.com' })
    expect(res.json().id).toMatch(/^[0-9a-f-]{36}$/)
    expect(JSON.stringify(res.json())).not.toContain('correct horse')
    const dup = await post('/admin/users', { email: 'alice@example.COM', password: 'another one' })
    expect(dup.statusCode).toBe(409)
    expect(dup.json()).toMatchObject({ status: 409, field: 'email' })
  })

  it('stores the password as an argon2id hash', async () => {
    const res = await post('/admin/users', { email: 'hash@example.com', password: 'password-123' })
    const row = await t.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow()
    expect(row.password_hash).toMatch(/^\$argon2id\$/)
  })

  it.each([
    [{ password: 'password-123' }, 'email'],
    [{ email: 'not-an-email', password: 'password-123' }, 'email'],
    [{ email: 'short@example.com', password: 'short' }, 'password'],
    [{ email: 'long@example.com', password: 'x'.repeat(1025) }, 'password'],
    [{ email: 'num@example.com', password: 12345678 }, 'password'],
  ])('refuses %j naming %s', async (payload, field) => {
    const res = await post('/admin/users', payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ status: 400, field })
  })

  it('deletes a user, and 404 for one that is not there', async () => {
    const user = (await post('/admin/users', { email: 'gone@example.com', password: 'password-123' })).json()
    const del = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/users/${user.id}`,
      headers: adminHeaders,
    })
    expect(del.statusCode).toBe(204)
    const again = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/users/${user.id}`,
      headers: adminHeaders,
    })
    expect(again.statusCode).toBe(404)
    const bad = await t.admin.inject({
      method: 'DELETE',
      url: '/admin/users/not-a-uuid',
      headers: adminHeaders,
    })
    expect(bad.statusCode).toBe(400)
  })
})

describe('POST /admin/resource-servers', () => {
  it('shows the secret once and stores only its hash', async () => {
    const res = await post('/admin/resource-servers', { name: 'Links API' })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body.id).toMatch(/^rs_/)
    expect(body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const row = await t.database.db
      .selectFrom('resource_servers')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow()
    expect(row.secret_hash).not.toBe(body.secret)
    expect(JSON.stringify(row)).not.toContain(body.secret)
    const list = await t.admin.inject({
      method: 'GET',
      url: '/admin/resource-servers',
      headers: adminHeaders,
    })
    expect(JSON.stringify(list.json())).not.toContain(body.secret)
    expect(await t.services.resourceServers.authenticate(body.id, body.secret)).toEqual({
      id: body.id,
      resource: null,
    })
    expect(await t.services.resourceServers.authenticate(body.id, `${body.secret}x`)).toBeUndefined()
    expect(await t.services.resourceServers.authenticate('rs_unknown', body.secret)).toBeUndefined()
  })

  it('refuses an empty name', async () => {
    const res = await post('/admin/resource-servers', { name: '  ' })
    expect(res.statusCode).toBe(400)
    expect(res.json().field).toBe('name')
  })
})
