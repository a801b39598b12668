import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { CHALLENGE, locationParams, VERIFIER } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { createStream, drain, revokes } from '../helpers/events.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'
import { allow, appWithUser, authorizeAndSignIn } from './setup.js'

/**
 * Issue 27 §2: a dynamic registration that goes away (RFC 7592 delete by the client, housekeeping
 * removing an unused one, the operator disabling it) ends its grants like any revocation: the
 * revocation feed announces the client (client-disabled, its client_id), its access tokens
 * introspect inactive, its refresh tokens answer invalid_client, and the audit trail has a
 * grant.revoked row per grant naming why (registration_deleted, registration_expired, client_disabled).
 */

const clock = createTestClock(new Date('2026-07-01T10:00:00.000Z'))
let t: TestApp
let email: string
let rs: ResourceServerCredentials
let stream: string
const REDIRECT = 'https://agent.example/cb'

beforeAll(async () => {
  // The stream outlives housekeeping's week of unused time (the test clock jumps it).
  ;({ t, email } = await appWithUser('removal', {
    clock,
    env: { EVENT_STREAM_IDLE_SECONDS: String(30 * 86_400) },
  }))
  rs = await createResourceServer(t)
  stream = await createStream(t, rs)
})
afterAll(async () => t?.close())

/** Registers, consents and exchanges the code: the registration and its tokens. */
async function registeredWithTokens() {
  const reg = (
    await t.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      payload: { client_name: 'Agent', redirect_uris: [REDIRECT] },
    })
  ).json<{ client_id: string; registration_access_token: string }>()
  const { browser, page } = await authorizeAndSignIn(t, email, {
    client_id: reg.client_id,
    redirect_uri: REDIRECT,
    scope: 'links:read',
    code_challenge: CHALLENGE,
  })
  const answer = await allow(browser, page)
  const token = await tokenRequest(t, {
    grant_type: 'authorization_code',
    code: locationParams(answer).code!,
    code_verifier: VERIFIER,
    client_id: reg.client_id,
  })
  expect(token.statusCode).toBe(200)
  return { ...reg, ...token.json<{ access_token: string; refresh_token: string }>() }
}

async function grantRevokedReasons(clientId: string): Promise<unknown[]> {
  const rows = await t.database.db
    .selectFrom('audit_events')
    .select('details')
    .where('client_id', '=', clientId)
    .where('event_type', '=', 'grant.revoked')
    .execute()
  return rows.map((row) => (row.details as { reason?: string } | null)?.reason)
}

/** What every path must leave: one client event on the feed naming it, tokens dead, the reason on record. */
async function expectEnded(
  reg: Awaited<ReturnType<typeof registeredWithTokens>>,
  reason: string,
  refreshAnswer: { status: number; error: string },
) {
  const events = await drain(t, rs, stream)
  expect(events.map((e) => [e.type, e.event.client_id])).toEqual([
    ['urn:linkauth:event:client-disabled', reg.client_id],
  ])
  expect(revokes(events, reg.access_token)).toBe(true)
  expect(await introspect(t, rs, reg.access_token)).toEqual({ active: false })
  const refresh = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: reg.refresh_token,
    client_id: reg.client_id,
  })
  expect(refresh.statusCode).toBe(refreshAnswer.status)
  expect(refresh.json().error).toBe(refreshAnswer.error)
  expect(await grantRevokedReasons(reg.client_id)).toEqual([reason])
}

describe('a dynamic registration goes away: its grants are revoked and announced', () => {
  it('RFC 7592 delete by the client', async () => {
    const reg = await registeredWithTokens()
    expect(await introspect(t, rs, reg.access_token)).toMatchObject({ active: true })
    await drain(t, rs, stream)
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/oauth/register/${reg.client_id}`,
      headers: { authorization: `Bearer ${reg.registration_access_token}` },
    })
    expect(del.statusCode).toBe(204)
    await expectEnded(reg, 'registration_deleted', { status: 401, error: 'invalid_client' })
    const gone = await t.database.db
      .selectFrom('clients')
      .select('id')
      .where('id', '=', reg.client_id)
      .executeTakeFirst()
    expect(gone).toBeUndefined()
  })

  it('housekeeping removes one whose grant went unused', async () => {
    const reg = await registeredWithTokens()
    await drain(t, rs, stream)
    // The grant is live (its refresh token has not expired) but unused for the whole TTL.
    clock.advance(7 * 24 * 3600 + 60)
    await t.services.housekeeping.run()
    await expectEnded(reg, 'registration_expired', { status: 401, error: 'invalid_client' })
  })

  it('the operator disables it (DELETE /admin/clients/:id)', async () => {
    const reg = await registeredWithTokens()
    await drain(t, rs, stream)
    const disabled = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${reg.client_id}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    })
    expect(disabled.statusCode).toBe(200)
    expect(disabled.json()).toMatchObject({ kind: 'dynamic', disabled_at: expect.any(String) })
    await expectEnded(reg, 'client_disabled', { status: 401, error: 'invalid_client' })
  })
})
