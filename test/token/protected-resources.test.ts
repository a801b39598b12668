import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'

/**
 * RFC 9728 §4: the authorization server's metadata lists the resource identifiers of its protected
 * resources (protected_resources), so a client can cross-check an API's authorization_servers (§7.6).
 * RFC 8707 defines no metadata member. Listed: enabled resource servers that have a resource.
 */
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => {
  await t.close()
})

const metadata = async () => {
  const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
  expect(res.statusCode).toBe(200)
  expect(res.headers['cache-control']).toBe('public, max-age=300')
  return res.json() as { protected_resources: string[] }
}

const register = (payload: object) =>
  t.admin.inject({ method: 'POST', url: '/admin/resource-servers', payload, headers: adminHeaders })

describe('protected_resources in the authorization server metadata', () => {
  it('is empty before any API registers a resource, and lists each one registered (at once on this instance)', async () => {
    expect((await metadata()).protected_resources).toEqual([])
    await register({ name: 'Legacy API' })
    expect((await metadata()).protected_resources).toEqual([])
    await register({ name: 'Links API', resource: 'https://links.example/api', scopes: ['links:read'] })
    await register({ name: 'Shop API', resource: 'https://shop.example/', scopes: ['ecommerce:write'] })
    expect((await metadata()).protected_resources).toEqual([
      'https://links.example/api',
      'https://shop.example/',
    ])
  })

  it('leaves out a disabled resource server once the list is read again', async () => {
    await t.database.db
      .updateTable('resource_servers')
      .set({ disabled_at: new Date() })
      .where('resource', '=', 'https://shop.example/')
      .execute()
    // Another registration makes this instance read the list again (otherwise within 30 s).
    await register({
      name: 'Commerce API',
      resource: 'https://commerce.example/api',
      scopes: ['products:sync'],
    })
    expect((await metadata()).protected_resources).toEqual([
      'https://links.example/api',
      'https://commerce.example/api',
    ])
  })
})
