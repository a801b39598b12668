import type { AddressInfo } from 'node:net'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import { createStream, drain, verifySet } from '../helpers/events.js'
import { createParty, exchangeCode } from '../helpers/fixtures.js'
import { basicAuth, createResourceServer, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Long polling over real HTTP: a held poll answers when a revocation commits (in this process or
 * another one), answers empty at max wait, and ends at once when the server stops or the client
 * leaves. Latency bounds are generous (2 s against a 25 s max wait): they prove the wake-up, not
 * speed; bench/event-feed.ts measures the latency.
 */
const onPostgres = testEngine() === 'postgres'
let t: TestApp
let rs: ResourceServerCredentials
let base: string

beforeAll(async () => {
  t = await buildTestApp()
  rs = await createResourceServer(t)
  base = await listen(t)
})
afterAll(async () => t.close())

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`
}

interface Answer {
  status: number
  body: { sets: Record<string, string>; moreAvailable: boolean }
  /** performance.now() when the answer arrived. */
  at: number
}

/** A long poll over HTTP (returnImmediately false), as a verifier sends it. */
async function longPoll(
  base: string,
  stream: string,
  options: { credentials?: ResourceServerCredentials; signal?: AbortSignal; ack?: string[] } = {},
): Promise<Answer> {
  const { signal, credentials = rs, ack = [] } = options
  const res = await fetch(`${base}/api/events/streams/${stream}/poll`, {
    method: 'POST',
    headers: {
      authorization: basicAuth(credentials.id, credentials.secret),
      'content-type': 'application/json',
    },
    body: JSON.stringify({ maxEvents: 100, ack }),
    ...(signal ? { signal } : {}),
  })
  return { status: res.status, body: (await res.json()) as Answer['body'], at: performance.now() }
}

/** Waits until `n` polls of the app are held (armed on its listener). */
async function held(app: TestApp, n = 1): Promise<void> {
  await expect.poll(() => app.services.events.waiting, { timeout: 10_000, interval: 10 }).toBe(n)
}

/** A grant revoked by its user; resolves when the revocation has committed. */
async function revokeSomething(app: TestApp): Promise<string> {
  const party = await createParty(app)
  await app.services.connectedApps.revoke(party.userId, party.client.id)
  return party.grant.id
}

async function listenerConnections(): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from pg_stat_activity
     where application_name = 'linkauth-listener' and datname = current_database()`.execute(t.database.db)
  return Number(rows[0]!.n)
}

describe('a held poll', () => {
  it('answers as soon as a revocation commits, well before max wait', async () => {
    const stream = await createStream(t, rs)
    await drain(t, rs, stream)
    const answer = longPoll(base, stream)
    await held(t)
    const grantId = await revokeSomething(t)
    const committed = performance.now()
    const { status, body, at } = await answer
    expect(status).toBe(200)
    const latency = at - committed
    expect(latency, `answered ${latency.toFixed(1)} ms after the commit`).toBeLessThan(2_000)
    const sets = Object.values(body.sets)
    expect(sets).toHaveLength(1)
    expect((await verifySet(t, rs, sets[0]!)).event.grant_id).toBe(grantId)
  })

  it('answers {"sets":{}} at max wait when nothing happens', async () => {
    const short = await buildTestApp({ env: { EVENTS_MAX_WAIT_SECONDS: '1' } })
    try {
      const shortBase = await listen(short)
      const credentials = await createResourceServer(short)
      const stream = await createStream(short, credentials)
      await drain(short, credentials, stream)
      const started = performance.now()
      const { status, body, at } = await longPoll(shortBase, stream, { credentials })
      expect(status).toBe(200)
      expect(body).toEqual({ sets: {}, moreAvailable: false })
      expect(at - started).toBeGreaterThanOrEqual(900)
      expect(at - started).toBeLessThan(10_000)
    } finally {
      await short.close()
    }
  })

  it('one listener wakes every held poll of the process', async () => {
    const streams = await Promise.all(Array.from({ length: 20 }, () => createStream(t, rs)))
    for (const stream of streams) await drain(t, rs, stream)
    const answers = streams.map((stream) => longPoll(base, stream))
    await held(t, 20)
    if (onPostgres) expect(await listenerConnections()).toBe(1)
    const grantId = await revokeSomething(t)
    for (const { status, body } of await Promise.all(answers)) {
      expect(status).toBe(200)
      const sets = Object.values(body.sets)
      expect(sets).toHaveLength(1)
      expect((await verifySet(t, rs, sets[0]!)).event.grant_id).toBe(grantId)
    }
  })

  it('ends with 401 when its resource server is disabled: at the next event, with none delivered', async () => {
    const retiring = await createResourceServer(t, 'Retiring API')
    const stream = await createStream(t, retiring)
    await drain(t, retiring, stream)
    const answer = longPoll(base, stream, { credentials: retiring })
    await held(t)
    await t.services.resourceServers.disableResourceServer(retiring.id)
    await revokeSomething(t)
    const committed = performance.now()
    const { status, body, at } = await answer
    expect(status).toBe(401)
    expect(body).toMatchObject({ error: 'invalid_client' })
    expect(at - committed).toBeLessThan(2_000)
  })

  it('ends with 401 within the credentials recheck (5 s) when its resource server is disabled and nothing happens', async () => {
    const retiring = await createResourceServer(t, 'Quiet retiring API')
    const stream = await createStream(t, retiring)
    await drain(t, retiring, stream)
    const answer = longPoll(base, stream, { credentials: retiring })
    await held(t)
    const disabled = performance.now()
    await t.services.resourceServers.disableResourceServer(retiring.id)
    const { status, at } = await answer
    expect(status).toBe(401)
    // Far sooner than max wait (25 s): the held poll looked at its credentials again.
    expect(at - disabled).toBeLessThan(7_000)
    await held(t, 0)
  })

  it('ends when the client hangs up, and is forgotten', async () => {
    const stream = await createStream(t, rs)
    await drain(t, rs, stream)
    const hangUp = new AbortController()
    const answer = longPoll(base, stream, { signal: hangUp.signal }).catch((err: unknown) => err)
    await held(t)
    hangUp.abort()
    expect(await answer).toBeInstanceOf(Error)
    await held(t, 0)
  })
})

describe.skipIf(!onPostgres)('across instances (PostgreSQL LISTEN/NOTIFY)', () => {
  it('a revocation committed by another instance, on its own pool, wakes the poll', async () => {
    const stream = await createStream(t, rs)
    await drain(t, rs, stream)
    const handle = await connectDatabase({ databaseUrl: t.database.url!, poolSize: 2 })
    const other = await buildTestApp({ database: { ...handle, url: t.database.url! } })
    try {
      const party = await createParty(other)
      const tokens = await exchangeCode(other, party)
      const answer = longPoll(base, stream)
      await held(t)
      const res = await other.app.inject({
        method: 'POST',
        url: '/api/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: tokens.refresh_token, client_id: party.client.id }).toString(),
      })
      expect(res.statusCode).toBe(200)
      const committed = performance.now()
      const { body, at } = await answer
      expect(at - committed).toBeLessThan(2_000)
      const sets = Object.values(body.sets)
      expect(sets).toHaveLength(1)
      expect((await verifySet(t, rs, sets[0]!)).type).toBe('urn:linkauth:event:family-revoked')
    } finally {
      await other.close()
      await handle.close()
    }
  })

  it('the listener comes back after its connection is killed, and polls wake meanwhile', async () => {
    const stream = await createStream(t, rs)
    await drain(t, rs, stream)
    expect(await listenerConnections()).toBe(1)
    await sql`select pg_terminate_backend(pid) from pg_stat_activity
               where application_name = 'linkauth-listener' and datname = current_database()`.execute(
      t.database.db,
    )
    const answer = longPoll(base, stream)
    await held(t)
    await revokeSomething(t)
    const committed = performance.now()
    const first = await answer
    expect(first.at - committed).toBeLessThan(2_000)
    expect(Object.keys(first.body.sets)).toHaveLength(1)
    await expect.poll(listenerConnections, { timeout: 10_000 }).toBe(1)

    const next = longPoll(base, stream, { ack: Object.keys(first.body.sets) })
    await held(t)
    const grantId = await revokeSomething(t)
    const again = performance.now()
    const second = await next
    expect(second.at - again).toBeLessThan(2_000)
    const sets = Object.values(second.body.sets)
    expect(sets).toHaveLength(1)
    expect((await verifySet(t, rs, sets[0]!)).event.grant_id).toBe(grantId)
  })
})

describe('stopping the server', () => {
  it('app.close answers held polls at once instead of after max wait', async () => {
    const stopping = await buildTestApp()
    const stoppingBase = await listen(stopping)
    const credentials = await createResourceServer(stopping)
    const stream = await createStream(stopping, credentials)
    await drain(stopping, credentials, stream)
    const answer = fetch(`${stoppingBase}/api/events/streams/${stream}/poll`, {
      method: 'POST',
      headers: {
        authorization: basicAuth(credentials.id, credentials.secret),
        'content-type': 'application/json',
      },
      body: '{}',
    })
    await held(stopping)
    const started = performance.now()
    await stopping.app.close()
    const closedIn = performance.now() - started
    try {
      expect(closedIn, `app.close took ${closedIn.toFixed(0)} ms`).toBeLessThan(2_000)
      const res = await answer
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ sets: {}, moreAvailable: false })
    } finally {
      await stopping.close()
    }
  })
})
