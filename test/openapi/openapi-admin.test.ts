import { describe, expect, it } from 'vitest'
import { adminHeaders } from '../helpers/app.js'
import { t, check, uncheckedIn, useOpenApiApp } from './openapi-answers.js'

/**
 * The admin listener's answers against its OpenAPI document (see openapi-answers.ts).
 */
useOpenApiApp()

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
    const standing = (op: string, at: string, status: number) =>
      check('admin', op, { url: at, headers: adminHeaders }, status)
    await standing('POST /admin/clients/{id}/verify', `${url}/verify`, 200)
    await standing('POST /admin/clients/{id}/verify', '/admin/clients/nobody/verify', 404)
    await standing('POST /admin/clients/{id}/unverify', `${url}/unverify`, 200)
    await standing('POST /admin/clients/{id}/unverify', '/admin/clients/nobody/unverify', 404)
    await standing('DELETE /admin/clients/{id}/standing', `${url}/standing`, 200)
    await standing('DELETE /admin/clients/{id}/standing', '/admin/clients/nobody/standing', 404)
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

describe('coverage', () => {
  it('every documented admin operation (passkeys aside) that exists was checked against a real answer above', () => {
    expect(uncheckedIn('admin')).toEqual([])
  })
})
