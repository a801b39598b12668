import { performance } from 'node:perf_hooks'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders } from '../helpers/app.js'
import { hiddenField } from '../helpers/browser.js'
import { createParty, exchangeCode, type Party } from '../helpers/fixtures.js'
import { HttpBrowser } from '../helpers/http-browser.js'
import {
  accessToken,
  captureLogger,
  requestsServed,
  startAuthServer,
  waitFor,
  type ListeningAuthServer,
} from '../helpers/resource.js'
import { createResourceServer, revokeRequest, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Local mode with the revocation feed, against the real feed of a live authorization server: a
 * revocation reaches the verifier by long poll, with no introspection call; a stale feed switches
 * to introspection per request and back.
 */

const PASSWORD = 'correct horse battery' // createParty's
const INTROSPECT = '/api/oauth/introspect'
// Short, so the outage test is quick; not shorter, so a loaded machine does not look like an outage.
const STALENESS_SECONDS = 3

let server: ListeningAuthServer
let credentials: ResourceServerCredentials
let verifier: ResourceVerifier
const log = captureLogger()

beforeAll(async () => {
  server = await startAuthServer()
  credentials = await createResourceServer(server.t)
  verifier = await createResourceVerifier({
    issuer: server.issuer,
    resource: server.t.config.accessTokenAudience,
    credentials,
    maxFeedStalenessSeconds: STALENESS_SECONDS,
    introspectionCacheSeconds: 0,
    logger: log.logger,
  })
})
afterAll(async () => {
  await verifier.close()
  await server.close()
})

/** Another instance of the resource API: its own stream, the same credentials. */
const subscribedVerifier = (maxFeedStalenessSeconds = STALENESS_SECONDS) =>
  createResourceVerifier({
    issuer: server.issuer,
    resource: server.t.config.accessTokenAudience,
    credentials,
    maxFeedStalenessSeconds,
    logger: captureLogger().logger,
  })

const introspectionsServed = () => requestsServed(server.t, INTROSPECT)

/** Resolves with the error code once verify refuses the token (polling, never a fixed sleep). */
function refusal(v: ResourceVerifier, token: string, timeoutMs = 5_000): Promise<string> {
  return waitFor(
    () =>
      v.verify(token).then(
        () => false,
        (err: { code: string }) => err.code,
      ),
    { timeoutMs, intervalMs: 5, what: 'the token to be refused' },
  )
}

/** The user signs in on the real server and presses Revoke on /account/apps. */
async function revokeOnAccountPage(party: Party): Promise<void> {
  const user = await server.t.services.users.findUser(party.userId)
  const browser = new HttpBrowser(server.issuer)
  const signIn = await browser.request('/login')
  const signedIn = await browser.request('/login', {
    method: 'POST',
    form: { email: user!.email, password: PASSWORD, csrf_token: hiddenField(signIn.body, 'csrf_token') },
  })
  expect(signedIn.res.status).toBe(303)
  const apps = await browser.request('/account/apps')
  const revoked = await browser.request(`/account/apps/${party.client.id}/revoke`, {
    method: 'POST',
    form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
  })
  expect(revoked.res.status).toBe(303)
}

describe('the revocation feed', () => {
  it('starts current: local mode, in contact', async () => {
    await waitFor(() => verifier.status().mode === 'local', { what: 'local mode' })
    expect(verifier.status()).toMatchObject({ mode: 'local', feedConnected: true })
    expect(verifier.status().lastFeedContact).toBeInstanceOf(Date)
  })

  it('a user revokes the app on /account/apps: the next call is refused within a second, no introspection', async () => {
    const party = await createParty(server.t)
    const token = await accessToken(server.t, party)
    await verifier.verify(token, ['links:read'])
    const callsBefore = verifier.stats().introspectionCalls
    const servedBefore = await introspectionsServed()
    const eventsBefore = verifier.stats().feedEventsReceived

    await revokeOnAccountPage(party)
    const revokedAt = performance.now()
    expect(await refusal(verifier, token, 1_000)).toBe('token_revoked')
    const elapsedMs = performance.now() - revokedAt
    console.log(`revocation reached the verifier after ${elapsedMs.toFixed(0)} ms`)
    expect(elapsedMs).toBeLessThan(1_000)

    expect(verifier.stats().introspectionCalls).toBe(callsBefore)
    expect(await introspectionsServed()).toBe(servedBefore)
    expect(verifier.stats().feedEventsReceived).toBeGreaterThan(eventsBefore)
    expect(verifier.status()).toMatchObject({ mode: 'local' })
    expect(verifier.status().revokedIds).toBeGreaterThanOrEqual(1)
  })

  it('RFC 7009 revocation of one access token stops that jti only', async () => {
    const party = await createParty(server.t)
    const token = await accessToken(server.t, party)
    const sibling = await accessToken(server.t, party)
    await verifier.verify(token)
    const calls = verifier.stats().introspectionCalls
    expect((await revokeRequest(server.t, { token, client_id: party.client.id })).statusCode).toBe(200)
    expect(await refusal(verifier, token, 1_000)).toBe('token_revoked')
    await expect(verifier.verify(sibling)).resolves.toMatchObject({ sub: party.userId })
    expect(verifier.stats().introspectionCalls).toBe(calls)
  })

  it('revoking a refresh token stops the access tokens of its family; disabling a client stops all of its', async () => {
    const party = await createParty(server.t)
    const tokens = await exchangeCode(server.t, party)
    const other = await accessToken(server.t, party) // another family of the same grant
    await revokeRequest(server.t, { token: tokens.refresh_token, client_id: party.client.id })
    expect(await refusal(verifier, tokens.access_token)).toBe('token_revoked')
    await expect(verifier.verify(other)).resolves.toBeDefined()

    const disabled = await server.t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${party.client.id}`,
      headers: adminHeaders,
    })
    expect(disabled.statusCode).toBeLessThan(300)
    expect(await refusal(verifier, other)).toBe('token_revoked')
  })

  it('after a key rotation, an event signed with the new key is read at once (one JWKS fetch)', async () => {
    // A verifier that fetched the key set a moment ago: the event's new kid must still fetch it again.
    const fresh = await subscribedVerifier()
    try {
      const party = await createParty(server.t)
      const token = await accessToken(server.t, party)
      await fresh.verify(token)
      const fetches = fresh.stats().jwksFetches
      const rotated = await server.t.admin.inject({
        method: 'POST',
        url: '/admin/keys/rotate',
        headers: adminHeaders,
      })
      expect(rotated.statusCode).toBe(201)
      await revokeOnAccountPage(party)
      const revokedAt = performance.now()
      expect(await refusal(fresh, token, 1_000)).toBe('token_revoked')
      expect(performance.now() - revokedAt).toBeLessThan(1_000)
      expect(fresh.stats()).toMatchObject({ jwksFetches: fetches + 1, introspectionCalls: 0 })
      // Tokens of the new key verify without another fetch.
      await fresh.verify(await accessToken(server.t, await createParty(server.t)))
      expect(fresh.stats().jwksFetches).toBe(fetches + 1)
    } finally {
      await fresh.close()
    }
  })

  it('a verifier started after the revocations learns them from its new stream', async () => {
    const party = await createParty(server.t)
    const token = await accessToken(server.t, party)
    await revokeOnAccountPage(party)
    const late = await subscribedVerifier()
    try {
      expect(late.status().mode).toBe('local')
      await expect(late.verify(token)).rejects.toMatchObject({ code: 'token_revoked' })
      expect(late.stats().introspectionCalls).toBe(0)
    } finally {
      await late.close()
    }
  })

  it('a stream the server forgot (404 invalid_stream): a new one is created and events flow again', async () => {
    const streams = () =>
      server.t.database.db
        .selectFrom('event_streams')
        .select('id')
        .where('resource_server_id', '=', credentials.id)
        .execute()
    const before = await streams()
    await server.t.database.db
      .deleteFrom('event_streams')
      .where('resource_server_id', '=', credentials.id)
      .execute()
    await waitFor(async () => (await streams()).length > 0, { what: 'a new stream' })
    expect((await streams()).map((s) => s.id)).not.toEqual(before.map((s) => s.id))

    const party = await createParty(server.t)
    const token = await accessToken(server.t, party)
    await waitFor(() => verifier.status().mode === 'local', { what: 'local mode' })
    await revokeOnAccountPage(party)
    expect(await refusal(verifier, token)).toBe('token_revoked')
  })

  it('the feed cut for longer than the bound: introspection per request, revocations still refused; back: local again', async () => {
    const revokedEarlier = await createParty(server.t)
    const revokedToken = await accessToken(server.t, revokedEarlier)
    await revokeOnAccountPage(revokedEarlier)
    expect(await refusal(verifier, revokedToken)).toBe('token_revoked')
    const live = await createParty(server.t)
    const liveToken = await accessToken(server.t, live)
    const revokedDuring = await createParty(server.t)
    const duringToken = await accessToken(server.t, revokedDuring)
    log.lines.length = 0

    server.proxy.cut((path) => path.startsWith('/api/events/'))
    try {
      await waitFor(() => verifier.status().mode === 'fallback', { what: 'fallback mode' })
      // Not before the bound: the last contact was more than maxFeedStalenessSeconds ago.
      const lastContact = verifier.status().lastFeedContact!.getTime()
      expect(Date.now() - lastContact).toBeGreaterThanOrEqual(STALENESS_SECONDS * 1000)
      expect(verifier.status().feedConnected).toBe(false)
      const warnings = log.lines.filter((l) => l.level === 'warn')
      expect(warnings).toHaveLength(1)
      expect(warnings[0]!.msg).toMatch(/introspection/)

      // Every request is now checked by introspection: counted by the verifier and by the server.
      const calls = verifier.stats().introspectionCalls
      const served = await introspectionsServed()
      await verifier.verify(liveToken)
      await verifier.verify(liveToken)
      expect(verifier.stats().introspectionCalls).toBe(calls + 2)
      await waitFor(async () => (await introspectionsServed()) === served + 2, { what: 'the server count' })
      // Known revocations are still refused locally; a revocation during the outage, by introspection.
      await expect(verifier.verify(revokedToken)).rejects.toMatchObject({ code: 'token_revoked' })
      await revokeOnAccountPage(revokedDuring)
      await expect(verifier.verify(duringToken)).rejects.toMatchObject({ code: 'token_inactive' })
      expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1)
    } finally {
      server.proxy.restore()
    }
    await waitFor(() => verifier.status().mode === 'local', { what: 'local mode again' })
    expect(log.lines.filter((l) => l.level === 'info').map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/current again/),
    )
    // Caught up: the revocation made during the outage is now known locally.
    const back = verifier.stats().introspectionCalls
    await expect(verifier.verify(duringToken)).rejects.toMatchObject({ code: 'token_revoked' })
    await verifier.verify(liveToken)
    expect(verifier.stats().introspectionCalls).toBe(back)
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1)
  })

  it('close() ends the subscription', async () => {
    const short = await subscribedVerifier(0.5)
    await short.close()
    const contact = short.status().lastFeedContact
    await waitFor(() => short.status().mode === 'fallback', { what: 'staleness after close' })
    expect(short.status().lastFeedContact).toEqual(contact)
  })
})
