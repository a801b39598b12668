import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import { expect } from 'vitest'
import type { TestApp } from './app.js'
import { jwtClaims } from './fixtures.js'
import { basicAuth, type ResourceServerCredentials } from './tokens.js'

/** POST /api/events/streams as the resource server; returns the new stream's id (expects 201). */
export async function createStream(t: TestApp, rs: ResourceServerCredentials): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/events/streams',
    headers: { authorization: basicAuth(rs.id, rs.secret) },
  })
  if (res.statusCode !== 201) throw new Error(`stream creation failed: ${res.statusCode} ${res.body}`)
  return res.json().stream_id
}

/** POST …/poll with a JSON body (returnImmediately unless said otherwise, so tests do not wait). */
export function pollRequest(
  t: TestApp,
  rs: ResourceServerCredentials,
  streamId: string,
  body: Record<string, unknown> = {},
) {
  return t.app.inject({
    method: 'POST',
    url: `/api/events/streams/${streamId}/poll`,
    headers: { authorization: basicAuth(rs.id, rs.secret), 'content-type': 'application/json' },
    payload: JSON.stringify({ returnImmediately: true, ...body }),
  })
}

/** A SET as the receiver sees it once verified: its header, its claims and its one event. */
export interface VerifiedSet {
  header: Record<string, unknown>
  claims: JWTPayload
  type: string
  event: Record<string, unknown>
}

/** Verifies a SET with jose against the server's JWKS: signature, typ secevent+jwt, iss and aud. */
export async function verifySet(
  t: TestApp,
  rs: ResourceServerCredentials,
  compact: string,
): Promise<VerifiedSet> {
  const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
  const { payload } = await jwtVerify(compact, createLocalJWKSet(jwks), {
    typ: 'secevent+jwt',
    issuer: t.config.issuer,
    audience: rs.id,
  })
  const events = payload.events as Record<string, Record<string, unknown>>
  const [type, event] = Object.entries(events)[0]!
  return { header: decodeProtectedHeader(compact), claims: payload, type, event: event! }
}

/** Polls without waiting, verifies every SET, acknowledges them all; returns them in order. */
export async function drain(
  t: TestApp,
  rs: ResourceServerCredentials,
  streamId: string,
): Promise<VerifiedSet[]> {
  const received: VerifiedSet[] = []
  let ack: string[] = []
  for (;;) {
    const res = await pollRequest(t, rs, streamId, { ack, maxEvents: 1000 })
    if (res.statusCode !== 200) throw new Error(`poll failed: ${res.statusCode} ${res.body}`)
    const body = res.json() as { sets: Record<string, string>; moreAvailable: boolean }
    ack = Object.keys(body.sets)
    for (const compact of Object.values(body.sets)) received.push(await verifySet(t, rs, compact))
    if (ack.length === 0) return received
  }
}

/** Rows in revocation_events: what the triggers wrote. */
export async function countEvents(t: TestApp): Promise<number> {
  const row = await t.database.db
    .selectFrom('revocation_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

/**
 * A test's view of one stream of the feed (`feed()`: the app, resource server and stream, known once
 * beforeAll ran): `mark()` drains it and counts the rows written so far; `newEvents()` answers the
 * SETs delivered since, after checking that exactly as many rows were written (every event written
 * is delivered, and nothing else).
 */
export function eventLog(feed: () => { t: TestApp; rs: ResourceServerCredentials; stream: string }) {
  let before = 0
  return {
    async mark(): Promise<void> {
      const { t, rs, stream } = feed()
      await drain(t, rs, stream)
      before = await countEvents(t)
    },
    async newEvents(): Promise<VerifiedSet[]> {
      const { t, rs, stream } = feed()
      const delivered = await drain(t, rs, stream)
      const count = await countEvents(t)
      expect(count).toBe(before + delivered.length)
      before = count
      return delivered
    },
  }
}

/** What a feed-following verifier (@linkauth/resource) does with the SETs: is this access token revoked? */
export function revokes(events: VerifiedSet[], accessToken: string): boolean {
  const c = jwtClaims(accessToken)
  return events.some(
    ({ event }) =>
      (event.grant_id !== undefined && event.family_id === undefined && event.grant_id === c.grant_id) ||
      (event.family_id !== undefined && event.family_id === c.family_id) ||
      (event.jti !== undefined && event.jti === c.jti) ||
      (event.client_id !== undefined && event.client_id === c.client_id),
  )
}
