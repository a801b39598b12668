import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildTestApp, GENEROUS_LIMITS, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import {
  authorizeUrl,
  Browser,
  CHALLENGE,
  hiddenField,
  locationParams,
  VERIFIER,
} from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'
import { allow, appWithUser, authorizeAndSignIn } from './setup.js'
import { clientAuditDetails } from '../helpers/audit.js'

/**
 * Issue 27 §1: an https client_id URL names a Client ID Metadata Document, which the server fetches
 * (here from a local HTTPS server trusted through the test-only CLIENT_METADATA_TEST_CA) and then
 * treats as a client: consent labelled as not registered, codes, tokens, introspection, connected
 * apps, the audit trail; refusals as error pages; caching within bounds; the operator's block list.
 */

const clock = createTestClock(new Date('2026-05-01T10:00:00.000Z'))
let server: DocumentServer
let t: TestApp
let email: string
let rs: ResourceServerCredentials
beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t, email } = await appWithUser('cimd', { clock, env: { CLIENT_METADATA_TEST_CA: server.caPath } }))
  rs = await createResourceServer(t)
})
afterAll(async () => {
  await t.close()
  await server.close()
})
beforeEach(() => clock.advance(0))

let counter = 0
/** A fresh document at a fresh path: each test its own client. */
function publish(fields: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const path = `/clients/${++counter}.json`
  const id = server.url(path)
  server.publish(path, clientDocument(id, fields), headers)
  return { id, path }
}

const params = (clientId: string, redirectUri = 'https://agent.example/callback') => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: redirectUri,
  scope: 'links:read',
  state: 'st',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
})

/** Authorize, sign in, and the page that follows (consent, or an error page). */
const startAndSignIn = (clientId: string, redirectUri?: string) =>
  authorizeAndSignIn(t, email, params(clientId, redirectUri))

describe('a metadata-document client', () => {
  it('is advertised in the RFC 8414 metadata', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    expect(res.json()).toMatchObject({ client_id_metadata_document_supported: true })
  })

  it('gets the consent page labelled as not registered, with the vouching host beside the name', async () => {
    const { id } = publish({ client_name: 'Agent Smith' })
    const { page } = await startAndSignIn(id)
    expect(page.statusCode).toBe(200)
    const host = new URL(id).host
    expect(page.body).toContain(
      // The host stays on the name's line: "(host:port)" never starts the heading's second line.
      `<h1 id="title"><span class="app-title"><span class="app-name">Agent Smith</span> <span class="client-host">(${host})</span></span> wants to use your account</h1>`,
    )
    expect(page.body).toContain('Not registered with this service.')
    expect(page.body).toContain(`<strong class="client-host">${host}</strong> vouches for it`)
    expect(page.body).not.toContain('It runs on your computer')
  })

  it('labels a client whose redirect URIs are all loopback as running on your computer', async () => {
    const { id } = publish({ redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]/callback'] })
    const { page } = await startAndSignIn(id, 'http://127.0.0.1:61234/callback')
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('It runs on your computer')
  })

  it('completes the flow: code, tokens, refresh, introspection, connected apps, audit rows', async () => {
    const { id, path } = publish()
    const { browser, page } = await startAndSignIn(id)
    const answer = await allow(browser, page)
    expect(answer.statusCode).toBe(303)
    const code = locationParams(answer).code!
    const token = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      code_verifier: VERIFIER,
      client_id: id,
    })
    expect(token.statusCode).toBe(200)
    const body = token.json<{ access_token: string; refresh_token: string }>()
    const refreshed = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: body.refresh_token,
      client_id: id,
    })
    expect(refreshed.statusCode).toBe(200)
    const introspected = await introspect(t, rs, refreshed.json<{ access_token: string }>().access_token)
    expect(introspected).toMatchObject({ active: true, client_id: id })
    // The token endpoint never fetched the document: one fetch, at authorize.
    expect(server.hits(path)).toBe(1)

    const apps = await browser.get('/account/apps')
    expect(apps.body).toContain('Agent Smith')
    const revoke = await browser.post(`/account/apps/${encodeURIComponent(id)}/revoke`, {
      csrf_token: hiddenField(apps.body, 'csrf_token'),
    })
    expect(revoke.statusCode).toBe(303)
    const after = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.json<{ refresh_token: string }>().refresh_token,
      client_id: id,
    })
    expect(after.statusCode).toBe(400)

    const audit = await t.admin.inject({
      method: 'GET',
      url: `/admin/audit?client_id=${encodeURIComponent(id)}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    })
    const types = audit.json<{ events: { type: string }[] }>().events.map((e) => e.type)
    expect(types).toEqual(expect.arrayContaining(['client.first_seen', 'consent.granted', 'grant.revoked']))
    // The first sight names the app's standing, as the other audit entries about an app do.
    const firstSeen = await clientAuditDetails(t.database.db, id, 'client.first_seen')
    expect(firstSeen).toEqual([expect.objectContaining({ name: 'Agent Smith', standing: 'vouched' })])
  })

  it('refuses an unregistered redirect_uri and an unknown port on https with an error page', async () => {
    const { id } = publish()
    const res = await new Browser(t.app).get(authorizeUrl(params(id, 'https://evil.example/callback')))
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
  })
})

describe('documents refused, each with a page naming what is wrong', () => {
  const refused = async (clientId: string) => {
    const res = await new Browser(t.app).get(authorizeUrl(params(clientId)))
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    return res.body
  }
  it.each([
    [
      'a mismatched client_id',
      { client_id: 'https://other.example/client.json' },
      'its client_id is not exactly the URL',
    ],
    ['a client secret', { client_secret: 's3cret-value' }, 'it contains a client secret'],
    [
      'a secret authentication method',
      { token_endpoint_auth_method: 'client_secret_basic' },
      'token_endpoint_auth_method must be',
    ],
    ['an unsupported grant', { grant_types: ['client_credentials'] }, 'grant_types may hold only'],
    ['no redirect URIs', { redirect_uris: [] }, 'redirect_uris must be a list'],
    [
      'an http redirect URI off loopback',
      { redirect_uris: ['http://agent.example/cb'] },
      'http is allowed only on loopback',
    ],
    ['a name too long', { client_name: 'A'.repeat(101) }, 'client_name must be 1 to 100'],
    [
      'a client_uri that is not https',
      { client_uri: 'javascript:alert(1)' },
      'client_uri must be an https URL',
    ],
  ])('%s', async (_what, fields, why) => {
    const path = `/refused/${++counter}.json`
    const id = server.url(path)
    server.publish(path, { ...clientDocument(id), ...fields })
    const body = await refused(id)
    expect(body).toContain(why)
    expect(body).not.toContain('s3cret-value')
    expect(await t.services.clients.findActiveClient(id)).toBeUndefined()
  })
  it('a document that is too large, or not there', async () => {
    const big = server.answer('/refused/big.json', { body: JSON.stringify({ pad: 'x'.repeat(6000) }) })
    expect(await refused(big)).toContain('larger than 5120 bytes')
    expect(await refused(server.url('/refused/none.json'))).toContain('answered 404')
  })
  it('a client_id URL without a path, or with dot segments', async () => {
    expect(await refused(`${server.origin}/`)).toContain('must have a path')
  })
  it('an http (or other non-https) client_id URL is told a metadata document must be https', async () => {
    const https = /names a metadata document, and a metadata document.*URL must be https/
    for (const id of [
      'http://agent.example/client.json',
      'ftp://agent.example/c',
      server.url('/c').replace('https:', 'http:'),
    ]) {
      expect(await refused(id), id).toMatch(https)
      const res = await tokenRequest(t, {
        grant_type: 'authorization_code',
        code: 'x'.repeat(43),
        code_verifier: VERIFIER,
        client_id: id,
      })
      expect(res.statusCode).toBe(401)
      expect(res.json()).toMatchObject({ error: 'invalid_client' })
      expect(res.json().error_description).toMatch(https)
    }
    // Not a URL: still the plain answer.
    const plain = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      code_verifier: VERIFIER,
      client_id: 'not a client',
    })
    expect(plain.json().error_description).toBe('Unknown or disabled client.')
  })
  it('refuses a client_id URL at the token endpoint when it names no client seen', async () => {
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      code_verifier: VERIFIER,
      client_id: server.url('/never-seen.json'),
    })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ error: 'invalid_client' })
  })
})

describe('caching', () => {
  it('fetches once while fresh (at least 5 minutes), again after, and a changed redirect URI revokes grants', async () => {
    const { id, path } = publish({}, { 'cache-control': 'max-age=60' })
    const first = await startAndSignIn(id)
    expect((await allow(first.browser, first.page)).statusCode).toBe(303)
    expect(server.hits(path)).toBe(1)
    clock.advance(240) // 4 minutes: max-age=60 is raised to the 5-minute floor
    const again = await first.browser.get(authorizeUrl(params(id)))
    expect(again.statusCode, `${again.headers.location} ${again.body.slice(0, 3000)}`).toBe(302) // remembered consent, https redirect URI
    expect(server.hits(path)).toBe(1)

    server.publish(
      path,
      clientDocument(id, { redirect_uris: ['https://agent.example/callback', 'https://agent.example/new'] }),
    )
    clock.advance(120)
    const changed = await first.browser.get(authorizeUrl(params(id)))
    expect(server.hits(path)).toBe(2)
    // A redirect URI was added after consent: the user is asked again.
    expect(changed.statusCode).toBe(200)
    expect(changed.body).toContain('wants to use your account')
    const rows = await t.database.db
      .selectFrom('audit_events')
      .select(['event_type', 'details'])
      .where('client_id', '=', id)
      .where('event_type', '=', 'client.document_changed')
      .execute()
    expect(rows).toHaveLength(1)
    expect(rows[0]!.details).toMatchObject({ grants_revoked: 1 })
    // The grant's own row names why, and whose doing it was (the document's, not the operator's).
    const revoked = await t.database.db
      .selectFrom('audit_events')
      .select(['actor_kind', 'details'])
      .where('client_id', '=', id)
      .where('event_type', '=', 'grant.revoked')
      .execute()
    expect(revoked).toEqual([
      { actor_kind: 'client', details: expect.objectContaining({ reason: 'client_document_changed' }) },
    ])
  })

  it('keeps serving a kept copy for a bounded time while the document is unreachable', async () => {
    const { id, path } = publish()
    expect((await startAndSignIn(id)).page.statusCode).toBe(200)
    server.answer(path, { status: 503, body: '{}' })
    clock.advance(301) // stale
    const stale = (await startAndSignIn(id)).page
    expect(stale.statusCode, stale.body).toBe(200)
    expect(server.hits(path)).toBe(2)
    clock.advance(3600) // past CLIENT_METADATA_STALE_MAX
    const gone = await startAndSignIn(id)
    expect(gone.page.statusCode).toBe(400)
    expect(gone.page.body).toContain('answered 503')
  })
})

describe('the operator blocks a client_id URL', () => {
  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    t.admin.inject({
      method,
      url,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      ...(payload ? { payload: payload as Record<string, unknown> } : {}),
    })

  it('revokes its grants, and it stays blocked whatever the document says later', async () => {
    const { id, path } = publish()
    const first = await startAndSignIn(id)
    const answer = await allow(first.browser, first.page)
    const token = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: locationParams(answer).code!,
      code_verifier: VERIFIER,
      client_id: id,
    })
    expect(token.statusCode).toBe(200)

    const blocked = await admin('POST', '/admin/blocked-clients', { client_id: id, reason: 'phishing' })
    expect(blocked.statusCode).toBe(201)
    expect((await admin('POST', '/admin/blocked-clients', { client_id: id })).statusCode).toBe(200)
    const list = await admin('GET', '/admin/blocked-clients')
    expect(list.json()).toMatchObject({
      blocked: expect.arrayContaining([expect.objectContaining({ client_id: id, reason: 'phishing' })]),
    })

    const refresh = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: token.json<{ refresh_token: string }>().refresh_token,
      client_id: id,
    })
    expect(refresh.statusCode).toBe(401)
    expect(refresh.json()).toMatchObject({ error: 'invalid_client' })

    server.publish(path, clientDocument(id, { client_name: 'Totally Legit' }))
    clock.advance(86_400)
    const res = await new Browser(t.app).get(authorizeUrl(params(id)))
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('The operator has blocked this application.')

    const audit = await clientAuditDetails(t.database.db, id, 'client.blocked')
    expect(audit).toHaveLength(1)
    expect(audit[0]).toMatchObject({ reason: 'phishing', grants_revoked: 1 })
  })

  it('blocks a client_id URL never seen; refuses a malformed one', async () => {
    const { id } = publish()
    expect((await admin('POST', '/admin/blocked-clients', { client_id: id })).statusCode).toBe(201)
    const res = await new Browser(t.app).get(authorizeUrl(params(id)))
    expect(res.body).toContain('The operator has blocked this application.')
    const bad = await admin('POST', '/admin/blocked-clients', { client_id: 'http://x.example/c' })
    expect(bad.statusCode).toBe(400)
    expect(
      (await admin('DELETE', `/admin/blocked-clients?client_id=${encodeURIComponent(id)}`)).statusCode,
    ).toBe(204)
    expect((await new Browser(t.app).get(authorizeUrl(params(id)))).statusCode).toBe(303)
  })
})

describe('fetches at once are capped', () => {
  it('a lookup past its deadline keeps its slot: the next one is told to come back (503), then served', async () => {
    let answer: (addresses: string[]) => void = () => {}
    const capped = await buildTestApp({
      database: t.database,
      env: {
        ...GENEROUS_LIMITS,
        CLIENT_METADATA_TEST_CA: server.caPath,
        CLIENT_METADATA_FETCH_CONCURRENCY: '1',
        CLIENT_METADATA_FETCH_TIMEOUT_MS: '300',
      },
      resolveHost: () => new Promise((resolve) => (answer = resolve)),
    })
    try {
      const slowDns = `https://slow-dns.example:${new URL(server.origin).port}/client.json`
      const late = await new Browser(capped.app).get(authorizeUrl(params(slowDns)))
      expect(late.statusCode).toBe(400)
      expect(late.body).toContain('did not answer within 300 ms')
      const { id } = publish()
      const busy = await new Browser(capped.app).get(authorizeUrl(params(id)))
      expect(busy.statusCode).toBe(503)
      expect(busy.headers['content-type']).toMatch(/^text\/html/)
      expect(busy.body).toContain('try again in a moment')
      answer([])
      await new Promise((resolve) => setImmediate(resolve))
      const served = await new Browser(capped.app).get(authorizeUrl(params(id)))
      expect(served.statusCode).toBe(303)
    } finally {
      await capped.app.close()
      await capped.admin.close()
    }
  })
})

describe('the trust policy', () => {
  it('off, a denied host, a host off the allow list, or scopes out of reach: refused', async () => {
    const { id } = publish()
    const host = new URL(id).hostname
    for (const env of [
      { CLIENT_METADATA_DOCUMENTS: 'false' } as Record<string, string>,
      { CLIENT_METADATA_DENIED_HOSTS: host },
      { CLIENT_METADATA_ALLOWED_HOSTS: 'agents.example,*.agents.example' },
    ]) {
      const other = await buildTestApp({
        database: t.database,
        env: { ...GENEROUS_LIMITS, CLIENT_METADATA_TEST_CA: server.caPath, ...env },
      })
      const res = await new Browser(other.app).get(authorizeUrl(params(id)))
      expect(res.statusCode, JSON.stringify(env)).toBe(400)
      await other.app.close()
      await other.admin.close()
    }
    const limited = await buildTestApp({
      database: t.database,
      env: {
        ...GENEROUS_LIMITS,
        CLIENT_METADATA_TEST_CA: server.caPath,
        CLIENT_METADATA_SCOPES: 'links:read',
      },
    })
    const { id: wide } = publish()
    const res = await new Browser(limited.app).get(authorizeUrl({ ...params(wide), scope: 'links:write' }))
    expect(res.statusCode).toBe(302)
    expect(locationParams(res).error).toBe('invalid_scope')
    await limited.app.close()
    await limited.admin.close()
  })
})
