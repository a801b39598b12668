import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'

/** POST/GET /admin/resource-servers with a resource identifier (RFC 8707) and the scopes it serves. */
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => {
  await t.close()
})

const post = (payload: unknown) =>
  t.admin.inject({
    method: 'POST',
    url: '/admin/resource-servers',
    payload: payload as object,
    headers: adminHeaders,
  })

const list = async () =>
  (await t.admin.inject({ method: 'GET', url: '/admin/resource-servers', headers: adminHeaders })).json()
    .resource_servers as Record<string, unknown>[]

let seq = 0
const unique = (path = '') => `https://api${++seq}.links.example${path}`

describe('registering a resource server with resource and scopes', () => {
  it('answers and lists the resource and the scopes (in the scope table’s order)', async () => {
    const resource = unique('/v1')
    const res = await post({ name: 'Links API', resource, scopes: ['links:write', 'links:read'] })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toMatchObject({ name: 'Links API', resource, scopes: ['links:read', 'links:write'] })
    expect(body.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const listed = (await list()).find((s) => s.id === body.id)
    expect(listed).toEqual({
      id: body.id,
      name: 'Links API',
      resource,
      scopes: ['links:read', 'links:write'],
      created_at: body.created_at,
      disabled_at: null,
      previous_secret_expires_at: null,
    })
    expect(JSON.stringify(await list())).not.toContain(body.secret)
    expect(await t.services.resourceServers.authenticate(body.id, body.secret)).toEqual({
      id: body.id,
      resource,
    })
  })

  it('keeps an old-style registration ({name} only) working: no resource, no scopes', async () => {
    const res = await post({ name: 'Legacy API' })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ name: 'Legacy API', resource: null, scopes: [] })
    expect((await list()).find((s) => s.id === res.json().id)).toMatchObject({ resource: null, scopes: [] })
  })

  it.each([
    'http://localhost:4000/api',
    'http://127.0.0.1:4000',
    'http://127.42.0.9/x',
    'http://[::1]:8080/',
    'https://api.example/path?tenant=1',
  ])('accepts %s', async (resource) => {
    const res = await post({ name: 'API', resource, scopes: ['links:read'] })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json().resource).toBe(resource) // stored exactly as given
  })

  it('accepts 2048 characters and refuses 2049', async () => {
    const base = unique('/')
    const exact = base + 'a'.repeat(2048 - base.length)
    expect((await post({ name: 'API', resource: exact, scopes: ['links:read'] })).statusCode).toBe(201)
    const res = await post({ name: 'API', resource: `${exact}b`, scopes: ['links:read'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      field: 'resource',
      detail: 'resource: must be at most 2048 characters',
    })
  })
})

describe('bad input is a 400 problem naming the field', () => {
  it.each([
    ['relative', '/api/links', /absolute/],
    ['without scheme', 'api.example/links', /absolute/],
    ['with a fragment', 'https://api.example/links#x', /fragment/],
    ['with an empty fragment', 'https://api.example/links#', /fragment/],
    ['http on a non-loopback host', 'http://api.example/links', /loopback/],
    ['http on a name that only starts like loopback', 'http://localhost.evil.example/', /loopback/],
    ['another scheme', 'urn:example:links', /absolute/],
    ['with spaces', 'https://api.example/a b', /URI/],
    ['with a leading space', ' https://api.example/', /URI/],
    ['with a tab', 'https://api.example/\ta', /URI/],
    ['with non-ASCII characters', 'https://exämple.com/', /URI/],
    ['with a backslash', 'https:\\\\api.example\\', /URI/],
    ['with user information', 'https://user:pw@api.example/', /user information/],
    ['empty', '', /absolute/],
  ])('resource %s', async (_what, resource, message) => {
    const res = await post({ name: 'API', resource, scopes: ['links:read'] })
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json().field).toBe('resource')
    expect(res.json().detail).toMatch(message)
  })

  it('resource of the wrong type', async () => {
    const res = await post({ name: 'API', resource: 42, scopes: ['links:read'] })
    expect(res.statusCode).toBe(400)
    expect(res.json().field).toBe('resource')
  })

  it.each([
    ['an unknown scope', ['links:read', 'links:admin'], 'scopes.1', /unknown scope/],
    ['a repeated scope', ['links:read', 'links:read'], 'scopes', /must not repeat a scope/],
    ['no scope', [], 'scopes', /at least one scope/],
    ['not a list', 'links:read', 'scopes', /a list of scopes/],
  ])('scopes with %s', async (_what, scopes, field, message) => {
    const res = await post({ name: 'API', resource: unique(), scopes })
    expect(res.statusCode).toBe(400)
    expect(res.json().field).toBe(field)
    expect(res.json().detail).toMatch(message)
  })

  it('the default audience (ACCESS_TOKEN_AUDIENCE) as resource: refused, it is every old API’s', async () => {
    const res = await post({ name: 'API', resource: t.config.accessTokenAudience, scopes: ['links:read'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ field: 'resource', detail: expect.stringMatching(/default audience/) })
  })

  it('a resource without scopes, and scopes without a resource', async () => {
    const noScopes = await post({ name: 'API', resource: unique() })
    expect(noScopes.statusCode).toBe(400)
    expect(noScopes.json().field).toBe('scopes')
    const noResource = await post({ name: 'API', scopes: ['links:read'] })
    expect(noResource.statusCode).toBe(400)
    expect(noResource.json().field).toBe('resource')
  })

  it('a resource another resource server has: 409 naming the field, the first one untouched', async () => {
    const resource = unique('/links')
    const first = await post({ name: 'Links API', resource, scopes: ['links:read'] })
    expect(first.statusCode).toBe(201)
    const before = (await list()).length
    const res = await post({ name: 'Impostor', resource, scopes: ['links:read', 'links:write'] })
    expect(res.statusCode).toBe(409)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    expect(res.json()).toMatchObject({ status: 409, field: 'resource' })
    expect(res.body).not.toMatch(/resource_servers_resource_key|duplicate key|at .*\.ts/)
    expect((await list()).length).toBe(before)
    // Another string is another resource: no normalisation.
    expect((await post({ name: 'Slash', resource: `${resource}/`, scopes: ['links:read'] })).statusCode).toBe(
      201,
    )
  })
})

describe('findTargets through the service', () => {
  it('maps each registered, enabled resource to its server; unknown strings are absent', async () => {
    const resource = unique('/shop')
    const created = await post({ name: 'Shop API', resource, scopes: ['ecommerce:write', 'products:sync'] })
    const targets = await t.services.resourceServers.findTargets([resource, unique('/nothing')])
    expect([...targets.entries()]).toEqual([
      [
        resource,
        { id: created.json().id, name: 'Shop API', resource, scopes: ['ecommerce:write', 'products:sync'] },
      ],
    ])
    await t.database.db
      .updateTable('resource_servers')
      .set({ disabled_at: new Date() })
      .where('id', '=', created.json().id)
      .execute()
    expect((await t.services.resourceServers.findTargets([resource])).size).toBe(0) // at once: no cache
  })

  it('answers hostile strings with no target, never a database error', async () => {
    const hostile = ['https://api.example/\u0000', '\ud800', 'x'.repeat(70_000), '', 'https://a.example/#f']
    expect((await t.services.resourceServers.findTargets(hostile)).size).toBe(0)
    expect((await t.services.resourceServers.findTargets([])).size).toBe(0)
  })
})
