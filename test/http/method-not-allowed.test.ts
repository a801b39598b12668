import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => t.close())

describe('a path we serve, asked with another method (RFC 9110 §15.5.6)', () => {
  it.each([
    ['GET', '/api/oauth/token', 'OPTIONS, POST', 'application/json', 'invalid_request'],
    ['PUT', '/api/oauth/introspect', 'POST', 'application/json', 'invalid_request'],
    ['POST', '/.well-known/jwks.json', 'GET, HEAD, OPTIONS', 'application/problem+json', undefined],
    ['DELETE', '/oauth/authorize', 'GET, HEAD, POST', 'text/html', undefined],
  ])(
    '%s %s → 405 with Allow: %s, in the path’s own error style',
    async (method, url, allow, type, oauthError) => {
      const res = await t.app.inject({ method: method as 'GET', url })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow?.toString().split(', ').sort()).toEqual(allow.split(', ').sort())
      expect(String(res.headers['content-type']).startsWith(type)).toBe(true)
      if (oauthError) expect(res.json().error).toBe(oauthError)
      expect(res.headers['referrer-policy']).toBe('no-referrer')
    },
  )

  it('matches parameters in a path like the router does: a served pattern is 405, an unserved path 404', async () => {
    const poll = await t.app.inject({ method: 'GET', url: '/api/events/streams/some-stream-id/poll' })
    expect(poll.statusCode).toBe(405)
    expect(poll.headers.allow).toBe('POST')
    // No route of any method has this shape (only /api/events/streams and …/{id}/poll).
    const unservedShape = await t.app.inject({ method: 'POST', url: '/api/events/streams/some-stream-id' })
    expect(unservedShape.statusCode).toBe(404)
    const unserved = await t.app.inject({ method: 'GET', url: '/api/oauth/token/extra' })
    expect(unserved.statusCode).toBe(404)
    expect(unserved.headers.allow).toBeUndefined()
    const trailingSlash = await t.app.inject({ method: 'GET', url: '/api/oauth/token/' })
    expect(trailingSlash.statusCode).toBe(404)
  })

  it('a path no method serves stays 404, with no Allow', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/page' })
    expect(res.statusCode).toBe(404)
    expect(res.headers.allow).toBeUndefined()
  })

  it('on the admin listener too, behind its token', async () => {
    const res = await t.admin.inject({ method: 'PUT', url: '/admin/clients', headers: adminHeaders })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow?.toString().split(', ').sort()).toEqual(['GET', 'HEAD', 'POST'])
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  })
})
