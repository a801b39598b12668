import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFRESH_RETRY_ANSWERS } from '../../src/grants/refresh-token.repository.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { hiddenField } from '../helpers/browser.js'
import { createParty, exchangeCode, type Party, tokenRequest } from '../helpers/fixtures.js'
import { testEngine } from '../helpers/database.js'

const METRICS_TOKEN = 'metrics-token-0123456789abcdefghijklmnopqrstuv'

/** The value of one sample in Prometheus text, e.g. sample(text, 'linkauth_tokens_issued_total{grant_type="refresh_token"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

let t: TestApp
let party: Party
let clock: TestClock
beforeAll(async () => {
  clock = createTestClock()
  t = await buildTestApp({ clock, env: { METRICS_TOKEN } })
  party = await createParty(t)
})
afterAll(async () => t.close())

const scrape = async () => {
  const res = await t.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  expect(res.statusCode).toBe(200)
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
  return res.body
}

describe('GET /metrics', () => {
  it('is not there on the public listener unless METRICS_TOKEN is set', async () => {
    const plain = await buildTestApp({ database: t.database })
    try {
      expect((await plain.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    } finally {
      await plain.close()
    }
  })

  it('wants the metrics token on the public listener and the admin token on the admin listener', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${METRICS_TOKEN}x`]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/)
    }
    expect((await t.admin.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401)
    const admin = await t.admin.inject({ method: 'GET', url: '/metrics', headers: adminHeaders })
    expect(admin.statusCode).toBe(200)
    expect(admin.body).toContain('linkauth_http_requests_total')
  })

  it('refuses a scraper with problem details on both listeners, as every other machine API does', async () => {
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } }),
      await t.admin.inject({ method: 'GET', url: '/metrics' }),
    ]) {
      expect(res.statusCode).toBe(401)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json()).toMatchObject({ status: 401, title: 'Unauthorized' })
    }
  })

  it('counts requests by route pattern and status, never by raw URL', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz?secret=abc' })
    await t.app.inject({ method: 'GET', url: '/no/such/page' })
    const text = await scrape()
    expect(
      sample(
        text,
        'linkauth_http_requests_total{listener="public",method="GET",route="/healthz",status="200"}',
      ),
    ).toBe(1)
    expect(
      sample(
        text,
        'linkauth_http_requests_total{listener="public",method="GET",route="unmatched",status="404"}',
      ),
    ).toBe(1)
    expect(text).toContain(
      'linkauth_http_request_duration_seconds_bucket{le="0.005",listener="public",method="GET",route="/healthz",status="200"}',
    )
    expect(text).not.toContain('secret=abc')
  })

  it('counts tokens per grant type, retries inside the window and refresh-token reuse', async () => {
    const tokens = await exchangeCode(t, party)
    const refresh = {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.client.id,
    }
    expect((await tokenRequest(t, refresh)).statusCode).toBe(200)
    // Inside REFRESH_REUSE_WINDOW the spent token is a retry: answered up to the bound, then refused.
    for (let i = 0; i < REFRESH_RETRY_ANSWERS; i++)
      expect((await tokenRequest(t, refresh)).statusCode).toBe(200)
    expect((await tokenRequest(t, refresh)).statusCode).toBe(400)
    clock.advance(t.config.refreshReuseWindow)
    expect((await tokenRequest(t, refresh)).statusCode).toBe(400) // reuse: the family is revoked
    const text = await scrape()
    expect(sample(text, 'linkauth_tokens_issued_total{grant_type="authorization_code"}')).toBe(1)
    expect(sample(text, 'linkauth_tokens_issued_total{grant_type="refresh_token"}')).toBe(
      1 + REFRESH_RETRY_ANSWERS,
    )
    expect(sample(text, 'linkauth_refresh_token_retries_total{outcome="answered"}')).toBe(
      REFRESH_RETRY_ANSWERS,
    )
    expect(sample(text, 'linkauth_refresh_token_retries_total{outcome="refused"}')).toBe(1)
    expect(sample(text, 'linkauth_refresh_token_reuse_total')).toBe(1)
  })

  it('counts revocations by kind', async () => {
    const tokens = await exchangeCode(t, party)
    const revoke = (token: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token, client_id: party.client.id }).toString(),
      })
    expect((await revoke(tokens.access_token)).statusCode).toBe(200)
    expect((await revoke(tokens.refresh_token)).statusCode).toBe(200)
    await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    const text = await scrape()
    expect(sample(text, 'linkauth_revocations_total{kind="access_token"}')).toBe(1)
    expect(sample(text, 'linkauth_revocations_total{kind="refresh_family"}')).toBe(1)
    expect(sample(text, 'linkauth_revocations_total{kind="grant"}')).toBe(1)
  })

  it('counts sign-in failures', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/login' })
    const cookie = (page.headers['set-cookie'] as string | string[] | undefined) ?? []
    const res = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: {
        cookie: (Array.isArray(cookie) ? cookie : [cookie]).map((c) => c.split(';')[0]).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        email: 'nobody@example.com',
        password: 'wrong password',
        csrf_token: hiddenField(page.body, 'csrf_token'),
      }).toString(),
    })
    expect(res.statusCode).toBe(400)
    expect(sample(await scrape(), 'linkauth_sign_in_failures_total')).toBe(1)
  })

  it.skipIf(testEngine() !== 'postgres')('shows the PostgreSQL pool', async () => {
    const text = await scrape()
    expect(sample(text, 'linkauth_db_pool_connections{state="total"}')).toBeGreaterThan(0)
    expect(sample(text, 'linkauth_db_pool_connections{state="waiting"}')).toBe(0)
  })
})
