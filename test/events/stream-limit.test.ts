import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import { createStream, pollRequest } from '../helpers/events.js'
import { basicAuth, createResourceServer } from '../helpers/tokens.js'

const clock = createTestClock(new Date('2026-05-01T12:00:00Z'))
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({
    clock,
    env: { EVENT_STREAMS_PER_RESOURCE_SERVER: '2', EVENT_STREAM_IDLE_SECONDS: '600' },
  })
})
afterAll(async () => t.close())

describe('EVENT_STREAMS_PER_RESOURCE_SERVER', () => {
  it('refuses a stream beyond the limit with 429 and Retry-After; other servers and idle streams aside', async () => {
    const rs = await createResourceServer(t)
    const other = await createResourceServer(t)
    const kept = await createStream(t, rs)
    await createStream(t, rs)
    const create = (credentials = rs) =>
      t.app.inject({
        method: 'POST',
        url: '/api/events/streams',
        headers: { authorization: basicAuth(credentials.id, credentials.secret) },
      })
    const refused = await create()
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('60')
    expect(refused.headers['cache-control']).toBe('no-store')
    expect(refused.json()).toMatchObject({ error: 'temporarily_unavailable' })
    expect((await create(other)).statusCode).toBe(201)

    // Eleven minutes on, one stream has been polled since and the other has gone idle: one more fits.
    clock.advance(5 * 60)
    expect((await pollRequest(t, rs, kept)).statusCode).toBe(200)
    clock.advance(6 * 60)
    expect((await create()).statusCode).toBe(201)
    expect((await create()).statusCode).toBe(429)
  })
})
