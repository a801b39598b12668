import { calculateJwkThumbprint, decodeJwt } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { hiddenField } from '../helpers/browser.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { dpopKey, type DpopKey, dpopProof } from '../helpers/dpop.js'
import { createStream, eventLog, revokes } from '../helpers/events.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
} from '../helpers/tokens.js'
import { answerOnDevicePage, DEVICE_CODE_GRANT_TYPE, seedDevice, startDevice } from './device-helpers.js'

/**
 * Tokens from the device grant are ordinary tokens: bound to a DPoP key when the poll that gets them
 * carries a proof (RFC 9449), and revoked, with an event on the feed, when the person revokes the
 * app on /account/apps.
 */
let t: TestApp
let clock: TestClock
let key: DpopKey
let rs: ResourceServerCredentials
let stream: string
beforeAll(async () => {
  clock = createTestClock(new Date('2026-03-01T10:00:00Z'))
  t = await buildTestApp({ clock, env: { ...GENEROUS_LIMITS } })
  key = await dpopKey()
  rs = await createResourceServer(t)
  stream = await createStream(t, rs)
})
afterAll(async () => t.close())

const log = eventLog(() => ({ t, rs, stream }))
beforeEach(() => log.mark())

const proof = () => dpopProof(key, { issuer: t.config.issuer, now: clock.now() })

function tokenRequest(params: Record<string, string>, dpop?: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop } : {}) },
    payload: new URLSearchParams(params).toString(),
  })
}

/** A device request the person allowed; the poll is the test's to make. */
async function approved() {
  const s = await seedDevice(t)
  const started = await startDevice(t, { client_id: s.client.id, scope: 'links:read' })
  const { device_code, user_code } = started.json<{ device_code: string; user_code: string }>()
  const { browser } = await answerOnDevicePage(t, user_code, s.email, 'allow')
  clock.advance(5)
  const poll = (dpop?: string) =>
    tokenRequest({ grant_type: DEVICE_CODE_GRANT_TYPE, device_code, client_id: s.client.id }, dpop)
  return { ...s, poll, browser }
}

describe('DPoP-bound device tokens', () => {
  it('a poll with a proof gets token_type DPoP and cnf.jkt; the family refreshes only with that key', async () => {
    const d = await approved()
    const issued = await d.poll(await proof())
    expect(issued.statusCode).toBe(200)
    const body = issued.json<{ token_type: string; access_token: string; refresh_token: string }>()
    expect(body.token_type).toBe('DPoP')
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(key.jwk) })

    const refresh = { grant_type: 'refresh_token', refresh_token: body.refresh_token, client_id: d.client.id }
    const withoutKey = await tokenRequest(refresh)
    expect(withoutKey.statusCode).toBe(400)
    const other = await dpopKey()
    const otherKey = await tokenRequest(
      refresh,
      await dpopProof(other, { issuer: t.config.issuer, now: clock.now() }),
    )
    expect(otherKey.statusCode).toBe(400)
    // Refused without revoking anything: the holder of the key still refreshes.
    const rotated = await tokenRequest(refresh, await proof())
    expect(rotated.statusCode).toBe(200)
    expect(rotated.json()).toMatchObject({ token_type: 'DPoP' })
  })

  it('a poll without a proof gets a Bearer token; a bad proof is refused and leaves the code usable', async () => {
    const d = await approved()
    const bad = await d.poll(await dpopProof(key, { issuer: 'https://elsewhere.example', now: clock.now() }))
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ error: 'invalid_dpop_proof' })
    clock.advance(5)
    const issued = await d.poll()
    expect(issued.statusCode).toBe(200)
    expect(issued.json()).toMatchObject({ token_type: 'Bearer' })
    expect(decodeJwt(issued.json<{ access_token: string }>().access_token).cnf).toBeUndefined()
  })
})

describe('the revocation event feed', () => {
  it('announces the grant of device tokens when the person revokes the app on /account/apps', async () => {
    const d = await approved()
    const issued = await d.poll()
    const { access_token, refresh_token } = issued.json<{ access_token: string; refresh_token: string }>()
    expect((await introspect(t, rs, access_token)).active).toBe(true)
    expect(await log.newEvents()).toEqual([])

    const apps = await d.browser.get('/account/apps')
    expect(apps.body).toContain('another device')
    const revoked = await d.browser.post(`/account/apps/${d.client.id}/revoke`, {
      csrf_token: hiddenField(apps.body, 'csrf_token'),
    })
    expect(revoked.statusCode).toBe(303)

    const events = await log.newEvents()
    expect(events).toHaveLength(1)
    expect(events[0]!.type).toBe('urn:linkauth:event:grant-revoked')
    expect(events[0]!.event.grant_id).toBe(decodeJwt(access_token).grant_id)
    expect(revokes(events, access_token)).toBe(true)
    expect(await introspect(t, rs, access_token)).toEqual({ active: false })
    expect(await refreshTokenIsLive(t, refresh_token)).toBe(false)
  })
})
