import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createStream, drain, pollRequest, verifySet } from '../helpers/events.js'
import { createParty, exchangeCode, jwtClaims } from '../helpers/fixtures.js'
import { basicAuth, createResourceServer, type ResourceServerCredentials } from '../helpers/tokens.js'

/** The feed's HTTP interface (RFC 8936 semantics as in docs/integrating.md), through app.inject. */
let t: TestApp
let clock: TestClock
let rs: ResourceServerCredentials
beforeAll(async () => {
  // The clock starts at the real time: deletions by cascade stamp their events with the database's now().
  clock = createTestClock(new Date())
  t = await buildTestApp({ clock })
  rs = await createResourceServer(t)
})
afterAll(async () => t.close())

interface PollBody {
  sets: Record<string, string>
  moreAvailable: boolean
}

/** Revokes `n` access tokens (RFC 7009 path: one event each); returns their jtis in order. */
async function revokeAccessTokens(n: number): Promise<string[]> {
  const party = await createParty(t)
  const jtis: string[] = []
  for (let i = 0; i < n; i++) {
    const tokens = await exchangeCode(t, party)
    const claims = jwtClaims(tokens.access_token)
    await t.services.accessTokenStatus.denyAccessToken(
      String(claims.jti),
      new Date(Number(claims.exp) * 1000),
    )
    jtis.push(String(claims.jti))
    clock.advance(1) // the test clock stands still: one second apart, they have an order
  }
  return jtis
}

/** A stream with nothing pending: the events so far acknowledged. */
async function freshStream(credentials = rs): Promise<string> {
  const stream = await createStream(t, credentials)
  await drain(t, credentials, stream)
  return stream
}

describe('discovery', () => {
  it('the metadata names the streams endpoint', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(res.json().revocation_event_streams_endpoint).toBe('http://localhost:3000/api/events/streams')
  })
})

describe('POST /api/events/streams', () => {
  it.each([
    ['no body', undefined],
    ['an empty JSON body', ''],
    ['{}', '{}'],
  ])('creates a stream with %s: 201, its poll endpoint and max wait', async (_name, payload) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/events/streams',
      headers: {
        authorization: basicAuth(rs.id, rs.secret),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload }),
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toEqual({
      stream_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      poll_endpoint: `http://localhost:3000/api/events/streams/${body.stream_id}/poll`,
      max_wait_seconds: 25,
    })
  })

  it('refuses a body that is not a JSON object (400) or not JSON (415)', async () => {
    const post = (contentType: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/events/streams',
        headers: { authorization: basicAuth(rs.id, rs.secret), 'content-type': contentType },
        payload,
      })
    for (const payload of ['[]', '"x"', '{"a":']) {
      const res = await post('application/json', payload)
      expect(res.statusCode, payload).toBe(400)
      expect(res.json().error).toBe('invalid_request')
    }
    const form = await post('application/x-www-form-urlencoded', 'a=b')
    expect(form.statusCode).toBe(415)
    expect(form.json().error).toBe('invalid_request')
  })
})

describe('authentication (as introspection)', () => {
  it.each([
    ['no credentials', undefined],
    ['a wrong secret', () => basicAuth(rs.id, 'wrong-secret')],
    ['an unknown resource server', () => basicAuth('rs_unknown', rs.secret)],
    ['a Bearer header', () => `Bearer ${rs.secret}`],
  ])('401 invalid_client with WWW-Authenticate for %s, on both endpoints', async (_name, header) => {
    const stream = await createStream(t, rs)
    for (const url of ['/api/events/streams', `/api/events/streams/${stream}/poll`]) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: header ? { authorization: header() } : {},
      })
      expect(res.statusCode, url).toBe(401)
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) })
      expect(res.headers['www-authenticate']).toBe('Basic realm="linkauth"')
    }
  })

  it('a disabled resource server is refused', async () => {
    const disabled = await createResourceServer(t, 'Retired API')
    await t.database.db
      .updateTable('resource_servers')
      .set({ disabled_at: clock.now() })
      .where('id', '=', disabled.id)
      .execute()
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/events/streams',
      headers: { authorization: basicAuth(disabled.id, disabled.secret) },
    })
    expect(res.statusCode).toBe(401)
    expect(res.json().error).toBe('invalid_client')
  })
})

describe('POST /api/events/streams/{id}/poll', () => {
  it('404 invalid_stream for an unknown id, a malformed id and another resource server’s stream', async () => {
    const other = await createResourceServer(t, 'Other API')
    const theirs = await createStream(t, other)
    for (const id of ['6f1c1b9e-2a57-4d0e-9a47-3c1c3f1b2d10', 'not-a-stream', theirs]) {
      const res = await pollRequest(t, rs, id)
      expect(res.statusCode, id).toBe(404)
      expect(res.json()).toEqual({ error: 'invalid_stream', error_description: expect.any(String) })
    }
    expect((await pollRequest(t, other, theirs)).statusCode).toBe(200)
  })

  it.each([
    ['maxEvents below 0', { maxEvents: -1 }],
    ['maxEvents above 1000', { maxEvents: 1001 }],
    ['maxEvents as a string', { maxEvents: '5' }],
    ['a fractional maxEvents', { maxEvents: 1.5 }],
    ['ack not an array', { ack: 'x' }],
    ['an ack that is not a string', { ack: [1] }],
    ['returnImmediately not a boolean', { returnImmediately: 'yes' }],
    ['setErrs without err', { setErrs: { x: { description: 'no err' } } }],
  ])('400 invalid_request for %s', async (_name, body) => {
    const stream = await createStream(t, rs)
    const res = await pollRequest(t, rs, stream, body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) })
  })

  it('400 for a body that is not JSON', async () => {
    const stream = await createStream(t, rs)
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/events/streams/${stream}/poll`,
      headers: { authorization: basicAuth(rs.id, rs.secret), 'content-type': 'application/json' },
      payload: '{"ack": [',
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toBe('invalid_request')
  })

  it('SETs are secevent+jwt signed with the access-token key: iss, aud, iat, jti and one event, no exp', async () => {
    const stream = await freshStream()
    const [jti] = await revokeAccessTokens(1)
    const res = await pollRequest(t, rs, stream)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body: PollBody = res.json()
    expect(Object.keys(body.sets)).toHaveLength(1)
    const [eventId, compact] = Object.entries(body.sets)[0]!
    const set = await verifySet(t, rs, compact)
    const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
    expect(set.header).toEqual({ typ: 'secevent+jwt', alg: 'ES256', kid: jwks.keys[0].kid })
    expect(set.claims).toEqual({
      iss: 'http://localhost:3000',
      aud: rs.id,
      iat: Math.floor(clock.now().getTime() / 1000),
      jti: eventId,
      events: { 'urn:linkauth:event:access-token-revoked': { jti, until: expect.any(Number) } },
    })
    expect(body.moreAvailable).toBe(false)
  })

  it('unacknowledged SETs come again; acknowledged (or reported as errors) ones do not', async () => {
    const stream = await freshStream()
    const jtis = await revokeAccessTokens(3)
    const first: PollBody = (await pollRequest(t, rs, stream)).json()
    const ids = Object.keys(first.sets)
    expect(ids).toHaveLength(3)
    const again: PollBody = (await pollRequest(t, rs, stream)).json()
    expect(Object.keys(again.sets)).toEqual(ids)
    // Each SET names one of the revoked tokens, oldest first.
    const named = await Promise.all(
      Object.values(again.sets).map(async (c) => (await verifySet(t, rs, c)).event.jti),
    )
    expect(named).toEqual(jtis)

    const third: PollBody = (
      await pollRequest(t, rs, stream, {
        ack: [ids[0]],
        setErrs: { [ids[1]!]: { err: 'invalid_key', description: 'kid not found' } },
      })
    ).json()
    expect(Object.keys(third.sets)).toEqual([ids[2]])
    const last: PollBody = (await pollRequest(t, rs, stream, { ack: [ids[2], 'unknown', ids[0]] })).json()
    expect(last).toEqual({ sets: {}, moreAvailable: false })
  })

  it('maxEvents pages with moreAvailable; maxEvents 0 only acknowledges', async () => {
    const stream = await freshStream()
    await revokeAccessTokens(5)
    const seen: string[] = []
    let ack: string[] = []
    const pages: boolean[] = []
    for (let i = 0; i < 3; i++) {
      const page: PollBody = (await pollRequest(t, rs, stream, { ack, maxEvents: 2 })).json()
      ack = Object.keys(page.sets)
      seen.push(...ack)
      pages.push(page.moreAvailable)
      expect(ack.length).toBe(i < 2 ? 2 : 1)
    }
    expect(pages).toEqual([true, true, false])
    expect(new Set(seen).size).toBe(5)
    // The last page is not acknowledged yet: maxEvents 0 says so without sending it, then acknowledges it.
    expect((await pollRequest(t, rs, stream, { maxEvents: 0 })).json()).toEqual({
      sets: {},
      moreAvailable: true,
    })
    expect((await pollRequest(t, rs, stream, { maxEvents: 0, ack })).json()).toEqual({
      sets: {},
      moreAvailable: false,
    })
    expect((await pollRequest(t, rs, stream)).json()).toEqual({ sets: {}, moreAvailable: false })
  })

  it('streams are independent: each instance of a resource server gets every event', async () => {
    const a = await freshStream()
    const b = await freshStream()
    await revokeAccessTokens(2)
    expect(await drain(t, rs, a)).toHaveLength(2)
    expect(await drain(t, rs, b)).toHaveLength(2)
  })

  it('a new stream starts with every event still relevant, and none that expired', async () => {
    const expiring = await revokeAccessTokens(1)
    // An access-token event lives until the token's exp (600 s) + 60 s; a grant event 660 s from now.
    clock.advance(400)
    const party = await createParty(t)
    await t.services.connectedApps.revoke(party.userId, party.client.id)
    const before = (await drain(t, rs, await createStream(t, rs))).map((s) => s.event)
    expect(before).toContainEqual({ jti: expiring[0], until: expect.any(Number) })
    expect(before).toContainEqual({ grant_id: party.grant.id, until: expect.any(Number) })
    clock.advance(300)
    const after = (await drain(t, rs, await createStream(t, rs))).map((s) => s.event)
    expect(after).not.toContainEqual({ jti: expiring[0], until: expect.any(Number) })
    expect(after).toContainEqual({ grant_id: party.grant.id, until: expect.any(Number) })
  })
})

describe('housekeeping', () => {
  it('deletes expired events and the acknowledgements of them; they are not delivered before that either', async () => {
    const stream = await createStream(t, rs)
    const [jti] = await revokeAccessTokens(1)
    const row = await t.database.db
      .selectFrom('revocation_events')
      .select(['id', 'until'])
      .where('access_token_jti', '=', jti!)
      .executeTakeFirstOrThrow()
    await pollRequest(t, rs, stream, { ack: [row.id], maxEvents: 0 })
    clock.set(new Date(row.until.getTime() + 1000))
    const other = await createStream(t, rs)
    const delivered = (await drain(t, rs, other)).map((s) => s.claims.jti)
    expect(delivered).not.toContain(row.id)
    const swept = await t.services.housekeeping.run()
    expect(swept.deleted.revocation_events).toBeGreaterThanOrEqual(1)
    const left = await t.database.db
      .selectFrom('revocation_events')
      .select('id')
      .where('until', '<=', clock.now())
      .execute()
    expect(left).toEqual([])
    const acks = await t.database.db
      .selectFrom('revocation_event_acks')
      .select('event_id')
      .where('event_id', '=', row.id)
      .execute()
    expect(acks).toEqual([])
  })

  it('a stream idle for EVENT_STREAM_IDLE_SECONDS answers 404 and is deleted', async () => {
    const stream = await createStream(t, rs)
    clock.advance(599)
    expect((await pollRequest(t, rs, stream)).statusCode).toBe(200)
    clock.advance(600)
    const res = await pollRequest(t, rs, stream)
    expect(res.statusCode).toBe(404)
    expect(res.json().error).toBe('invalid_stream')
    expect((await t.services.housekeeping.run()).deleted.event_streams).toBeGreaterThanOrEqual(1)
    const rows = await t.database.db
      .selectFrom('event_streams')
      .select('id')
      .where('id', '=', stream)
      .execute()
    expect(rows).toEqual([])
  })
})

describe('configuration', () => {
  it('events live ACCESS_TOKEN_TTL + 60 s; max_wait_seconds is EVENTS_MAX_WAIT_SECONDS', async () => {
    const other = await buildTestApp({
      clock,
      env: { ACCESS_TOKEN_TTL: '120', EVENTS_MAX_WAIT_SECONDS: '7' },
    })
    try {
      const credentials = await createResourceServer(other)
      const created = await other.app.inject({
        method: 'POST',
        url: '/api/events/streams',
        headers: { authorization: basicAuth(credentials.id, credentials.secret) },
      })
      expect(created.json().max_wait_seconds).toBe(7)
      const party = await createParty(other)
      await other.services.connectedApps.revoke(party.userId, party.client.id)
      const [set] = await drain(other, credentials, created.json().stream_id)
      expect(set!.event).toEqual({
        grant_id: party.grant.id,
        until: Math.ceil(clock.now().getTime() / 1000) + 180,
      })
    } finally {
      await other.close()
    }
  })
})
