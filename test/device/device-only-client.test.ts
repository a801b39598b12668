import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser } from '../helpers/browser.js'
import {
  answerOnDevicePage,
  DEVICE_CODE_GRANT_TYPE,
  poll,
  seedDevice,
  startDevice,
} from './device-helpers.js'

/**
 * A client that uses only the device grant (a command-line tool) needs no redirect URI (RFC 7591 §2:
 * they are for redirect-based flows), whether it registers itself or the operator registers it; a
 * client that may use the code grant still needs one.
 */

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ env: { ...GENEROUS_LIMITS } })
})
afterAll(async () => t.close())

const register = (payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/oauth/register', payload })

describe('dynamic registration', () => {
  it('registers a device-only public client without redirect_uris, and it gets tokens', async () => {
    const registered = await register({
      client_name: 'Links CLI',
      grant_types: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
      token_endpoint_auth_method: 'none',
    })
    expect(registered.statusCode).toBe(201)
    const body = registered.json<Record<string, unknown>>()
    expect(body).toMatchObject({
      redirect_uris: [],
      response_types: [],
      grant_types: ['refresh_token', DEVICE_CODE_GRANT_TYPE],
    })
    const clientId = body.client_id as string

    const started = await startDevice(t, { client_id: clientId, scope: 'links:read' })
    expect(started.statusCode).toBe(200)
    const { user_code, device_code } = started.json<{ user_code: string; device_code: string }>()
    const { email } = await seedDevice(t)
    const { consent, answer } = await answerOnDevicePage(t, user_code, email, 'allow')
    // No host to show: the consent says so instead of an empty name.
    expect(consent.body).toContain('<span class="client-host">(no web address)</span>')
    expect(consent.body).toContain('data-standing="unverified"')
    expect(consent.body).not.toContain('<strong class="client-host"></strong>')
    expect(answer.statusCode).toBe(200)
    const issued = await poll(t, clientId, device_code)
    expect(issued.statusCode).toBe(200)

    // It cannot use the redirect flow: the authorize page refuses it without redirecting anywhere.
    const authorize = await new Browser(t.app).get(
      `/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: 'https://evil.example/cb',
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      })}`,
    )
    expect(authorize.statusCode).toBe(400)
    expect(authorize.headers.location).toBeUndefined()
  })

  it('still demands a redirect URI of a client that may use the code grant', async () => {
    for (const payload of [
      { client_name: 'Web app' },
      { client_name: 'Both', grant_types: ['authorization_code', DEVICE_CODE_GRANT_TYPE] },
      { client_name: 'Empty', grant_types: ['authorization_code'], redirect_uris: [] },
    ]) {
      const refused = await register(payload)
      expect(refused.statusCode).toBe(400)
      expect(refused.json()).toMatchObject({ error: 'invalid_redirect_uri' })
    }
  })
})

describe('the operator', () => {
  const admin = (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) =>
    t.admin.inject({ method, url, headers: adminHeaders, payload })

  it('registers a device-only client without redirect URIs, and cannot then give it the code grant alone', async () => {
    const created = await admin('POST', '/admin/clients', {
      name: 'Operator CLI',
      grant_types: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
    })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ redirect_uris: [] })
    const id = created.json<{ client_id: string }>().client_id
    const widened = await admin('PATCH', `/admin/clients/${id}`, {
      grant_types: ['authorization_code', DEVICE_CODE_GRANT_TYPE],
    })
    expect(widened.statusCode).toBe(400)
    expect(widened.body).toContain('redirect_uris: at least one redirect URI')
    const withUri = await admin('PATCH', `/admin/clients/${id}`, {
      grant_types: ['authorization_code', DEVICE_CODE_GRANT_TYPE],
      redirect_uris: ['https://cli.example/callback'],
    })
    expect(withUri.statusCode).toBe(200)
  })

  it('refuses a client of the code grant without redirect URIs (400, not a database error)', async () => {
    const refused = await admin('POST', '/admin/clients', { name: 'No URIs' })
    expect(refused.statusCode).toBe(400)
    const emptied = await admin('POST', '/admin/clients', { name: 'No URIs', redirect_uris: [] })
    expect(emptied.statusCode).toBe(400)
  })
})
