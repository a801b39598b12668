import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { Browser, hiddenField } from '../helpers/browser.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import {
  answerOnDevicePage,
  DEVICE_CODE_GRANT_TYPE,
  poll,
  seedDevice,
  startDevice,
} from './device-helpers.js'

/**
 * The device grant's rules (RFC 8628) on a fixed clock: each token-endpoint error, the interval and
 * slow_down, expiry, single use and concurrent polls, the user-code throttle, and the consent that
 * guards against device-code phishing.
 */

let t: TestApp
let clock: TestClock
beforeAll(async () => {
  clock = createTestClock(new Date('2026-03-01T10:00:00Z'))
  t = await buildTestApp({ clock, env: { ...GENEROUS_LIMITS } })
})
afterAll(async () => t.close())

async function started(scope = 'links:read') {
  const s = await seedDevice(t)
  const res = await startDevice(t, { client_id: s.client.id, scope })
  expect(res.statusCode).toBe(200)
  expect(res.headers['cache-control']).toBe('no-store')
  const body = res.json<{ device_code: string; user_code: string; interval: number; expires_in: number }>()
  return { ...s, ...body }
}

const errorOf = (res: { json(): unknown }) => (res.json() as { error: string }).error

describe('the device authorization endpoint', () => {
  it('refuses a client not allowed the device grant (unauthorized_client), an unknown one, a bad scope', async () => {
    const plain = await seedDevice(t, ['authorization_code', 'refresh_token'])
    const refused = await startDevice(t, { client_id: plain.client.id, scope: 'links:read' })
    expect(refused.statusCode).toBe(400)
    expect(errorOf(refused)).toBe('unauthorized_client')
    expect(errorOf(await startDevice(t, { client_id: 'nope-nope-nope-nope', scope: 'links:read' }))).toBe(
      'invalid_client',
    )
    const s = await seedDevice(t)
    expect(errorOf(await startDevice(t, { client_id: s.client.id, scope: 'links:read root' }))).toBe(
      'invalid_scope',
    )
    expect(
      errorOf(await startDevice(t, { client_id: s.client.id, resource: 'https://nowhere.example/' })),
    ).toBe('invalid_target')
    expect(errorOf(await startDevice(t, {}))).toBe('invalid_request')
    expect(await t.database.db.selectFrom('device_authorizations').selectAll().execute()).toHaveLength(0)
  })
})

describe('polling', () => {
  it('answers authorization_pending, then slow_down when too soon (the interval 5 s longer), enforced', async () => {
    const d = await started()
    const first = await poll(t, d.client.id, d.device_code)
    expect(first.statusCode).toBe(400)
    expect(errorOf(first)).toBe('authorization_pending')
    clock.advance(2)
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('slow_down')
    // The interval is now 10 s: 6 s later is still too soon, and adds 5 s again.
    clock.advance(6)
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('slow_down')
    clock.advance(15)
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('authorization_pending')
  })

  it('issues once: a later poll and concurrent polls get invalid_grant, exactly one token', async () => {
    const d = await started('links:read links:write')
    await answerOnDevicePage(t, d.user_code, d.email, 'allow')
    const polls = await Promise.all(Array.from({ length: 8 }, () => poll(t, d.client.id, d.device_code)))
    const ok = polls.filter((r) => r.statusCode === 200)
    expect(ok).toHaveLength(1)
    expect(ok[0]!.json()).toMatchObject({ token_type: 'Bearer', scope: 'links:read links:write' })
    for (const r of polls.filter((r) => r.statusCode !== 200))
      expect(['invalid_grant', 'slow_down']).toContain(errorOf(r))
    clock.advance(60)
    const replay = await poll(t, d.client.id, d.device_code)
    expect(errorOf(replay)).toBe('invalid_grant')
    const families = await t.database.db
      .selectFrom('refresh_families')
      .where('client_id', '=', d.client.id)
      .selectAll()
      .execute()
    expect(families).toHaveLength(1)
  })

  it('answers access_denied after Deny, and keeps answering it', async () => {
    const d = await started()
    await answerOnDevicePage(t, d.user_code, d.email, 'deny')
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('access_denied')
    clock.advance(10)
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('access_denied')
  })

  it('answers expired_token once the code is over 10 minutes old, and the user code no longer works', async () => {
    const d = await started()
    clock.advance(601)
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('expired_token')
    const browser = new Browser(t.app)
    const form = await browser.get('/device')
    const entered = await browser.post('/device', {
      csrf_token: hiddenField(form.body, 'csrf_token'),
      user_code: d.user_code,
    })
    expect(entered.statusCode).toBe(400)
    expect(entered.body).toContain('not valid')
  })

  it('refuses an unknown device code and one of another client with invalid_grant, touching nothing', async () => {
    const d = await started()
    const other = await seedDevice(t)
    expect(errorOf(await poll(t, d.client.id, 'x'.repeat(43)))).toBe('invalid_grant')
    expect(errorOf(await poll(t, other.client.id, d.device_code))).toBe('invalid_grant')
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('authorization_pending')
  })

  it('refuses a client whose device grant the operator took away (unauthorized_client)', async () => {
    const d = await started()
    await t.services.clients.updateClient(d.client.id, {
      grant_types: ['authorization_code', 'refresh_token'],
    })
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('unauthorized_client')
  })
})

describe('the /device page and the consent', () => {
  it('throttles wrong user codes per address: the 11th guess is refused before any lookup', async () => {
    const browser = new Browser(t.app, '203.0.113.77')
    const form = await browser.get('/device')
    const csrf = hiddenField(form.body, 'csrf_token')
    for (let i = 0; i < 10; i++) {
      const res = await browser.post('/device', { csrf_token: csrf, user_code: 'BCDF-GHJK' })
      expect(res.statusCode).toBe(400)
    }
    const d = await started()
    const blocked = await browser.post('/device', { csrf_token: csrf, user_code: d.user_code })
    expect(blocked.statusCode).toBe(429)
    // Another address is not held back.
    const { answer } = await answerOnDevicePage(t, d.user_code, d.email, 'allow', {
      browser: new Browser(t.app, '203.0.113.78'),
    })
    expect(answer.statusCode).toBe(200)
  })

  it('prefills the code from verification_uri_complete', async () => {
    const d = await started()
    const page = await new Browser(t.app).get(`/device?user_code=${d.user_code}`)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`value="${d.user_code}"`)
  })

  it('needs the "I started this myself" box for Allow, and asks again even under a live grant', async () => {
    const d = await started()
    const unticked = await answerOnDevicePage(t, d.user_code, d.email, 'allow', { confirm: false })
    expect(unticked.answer.statusCode).toBe(400)
    expect(unticked.answer.body).toContain('Tick the box')
    expect(errorOf(await poll(t, d.client.id, d.device_code))).toBe('authorization_pending')
    const { answer, browser } = await answerOnDevicePage(t, d.user_code, d.email, 'allow', {
      browser: unticked.browser,
    })
    expect(answer.statusCode).toBe(200)

    // A second device request of the same app, signed in, with a live grant: the consent is shown again.
    const again = await startDevice(t, { client_id: d.client.id, scope: 'links:read' })
    const second = await answerOnDevicePage(
      t,
      again.json<{ user_code: string }>().user_code,
      d.email,
      'deny',
      { browser },
    )
    expect(second.consent.body).toContain('will run on another device')
    expect(second.consent.body).toContain('name="started_here"')
    // The app's standing box and host, as on the consent page; the host even for a verified app.
    expect(second.consent.body).toContain('data-standing="verified"')
    expect(second.consent.body).toContain('<span class="client-host">(app.example)</span>')
  })

  it('lists the app on the connected-apps page as running on another device', async () => {
    const d = await started()
    const { browser } = await answerOnDevicePage(t, d.user_code, d.email, 'allow')
    clock.advance(5)
    const issued = await poll(t, d.client.id, d.device_code)
    expect(issued.statusCode).toBe(200)
    // Its access token carries the app's standing, as the code grant's do (issue 37).
    expect(decodeJwt(issued.json<{ access_token: string }>().access_token).client_standing).toBe('verified')
    const apps = await browser.get('/account/apps')
    expect(apps.body).toContain('Links CLI')
    expect(apps.body).toContain('another device')
    expect(apps.body).toMatch(/another device[^]*<strong class="client-host">app\.example<\/strong>/)
    // The consent is in the audit trail as any other, marked as a device's.
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'details'])
      .where('client_id', '=', d.client.id)
      .execute()
    expect(audit).toContainEqual(
      expect.objectContaining({
        event_type: 'consent.granted',
        details: expect.objectContaining({ device: true }),
      }),
    )
  })
})

describe('a self-registered device client', () => {
  let narrow: TestApp
  beforeAll(async () => {
    narrow = await buildTestApp({ env: { ...GENEROUS_LIMITS, DYNAMIC_REGISTRATION_SCOPES: 'links:read' } })
  })
  afterAll(async () => narrow.close())

  it('gets no scope beyond DYNAMIC_REGISTRATION_SCOPES, as at /oauth/authorize', async () => {
    const registered = await narrow.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      payload: {
        client_name: 'Agent',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['refresh_token', DEVICE_CODE_GRANT_TYPE],
        token_endpoint_auth_method: 'none',
      },
    })
    expect(registered.statusCode).toBe(201)
    const clientId = registered.json<{ client_id: string }>().client_id
    const wide = await startDevice(narrow, { client_id: clientId, scope: 'links:read links:write' })
    expect(errorOf(wide)).toBe('invalid_scope')
    const defaulted = await startDevice(narrow, { client_id: clientId })
    expect(defaulted.statusCode).toBe(200)
    const consent = await answerOnDevicePage(
      narrow,
      defaulted.json<{ user_code: string }>().user_code,
      (await seedDevice(narrow)).email,
      'deny',
    )
    expect(consent.consent.body).toContain('data-standing="unverified"')
    expect(consent.consent.body).not.toContain('links:write')
  })
})
