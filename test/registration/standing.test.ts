import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, CHALLENGE, locationParams, PASSWORD, VERIFIER } from '../helpers/browser.js'
import { createTestClock } from '../helpers/clock.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import { tokenRequest } from '../helpers/fixtures.js'
import { allow, appWithUser, authorizeAndSignIn } from './setup.js'

/**
 * Issue 37 §1, §2 and §5: an app's standing on every page, the operator's verify and unverify, no
 * borrowed names at registration (or, for a metadata document, its host shown instead), and the
 * account page saying "connected" only while the app holds a live token.
 */

const clock = createTestClock(new Date('2026-07-01T10:00:00.000Z'))
let t: TestApp
let email: string
let server: DocumentServer
let acceptanceAppId: string
beforeAll(async () => {
  server = await startDocumentServer()
  ;({ t, email } = await appWithUser('standing', {
    clock,
    env: { CLIENT_METADATA_TEST_CA: server.caPath, RESERVED_CLIENT_NAMES: 'Contoso, Northwind Bank' },
  }))
  ;({ id: acceptanceAppId } = await t.services.clients.createClient({
    name: 'Acceptance App',
    redirect_uris: ['https://acceptance.example/cb'],
  }))
})
afterAll(async () => {
  await t.close()
  await server.close()
})

let address = 0
const register = (body: object) =>
  t.app.inject({
    method: 'POST',
    url: '/api/oauth/register',
    payload: body,
    remoteAddress: `10.37.0.${++address}`,
  })

const CB = 'https://phish.example/cb'
const params = (clientId: string, redirectUri = CB) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: redirectUri,
  scope: 'links:read',
  state: 'st',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
})

describe('no borrowed names at registration', () => {
  const refused = {
    "the service's own name": 'linkauth',
    'the service name in capitals': 'LINKAUTH',
    'the service name with a capital I for the l': 'IinkauTh',
    "an operator-registered app's name": 'Acceptance App',
    'that name spelled differently': 'acceptance-app',
    'that name in Cyrillic look-alikes': 'Ассерtance Арр',
    'a brand the operator reserved': 'Contoso',
    'that brand with a Greek omicron': 'C\u03bfntoso',
    'another reserved brand, full-width': 'Ｎｏｒｔｈｗｉｎｄ Ｂａｎｋ',
  }
  for (const [what, name] of Object.entries(refused)) {
    it(`refuses ${what} (${JSON.stringify(name)})`, async () => {
      const res = await register({ client_name: name, redirect_uris: [CB] })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_client_metadata')
      // A look-alike in another script is caught by the mixed-script rule first; both name UTS #39.
      expect(res.json().error_description).toMatch(/(client_name is reserved|mix scripts).*UTS #39/)
    })
  }

  const unreadable = {
    'a right-to-left override': ['Acceptance\u202eppA', /invisible format characters/],
    'a zero-width space': ['Accept\u200bance App', /invisible format characters/],
    'a zero-width joiner': ['Notes\u200dApp', /invisible format characters/],
    'a Cyrillic letter among Latin ones': ['P\u0430ypal', /mix scripts with look-alike letters/],
    'a control character': ['Notes\u0007', /control characters/],
  } as const
  for (const [what, [name, rule]] of Object.entries(unreadable)) {
    it(`refuses a name with ${what}`, async () => {
      const res = await register({ client_name: name, redirect_uris: [CB] })
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_client_metadata')
      expect(res.json().error_description).toMatch(rule)
    })
  }

  it('accepts a name of its own, in one script or several that imitate nothing', async () => {
    for (const name of ['Notes for Acceptance', 'Bücher App', 'Ωmega Notes', '日本語のノート'])
      expect((await register({ client_name: name, redirect_uris: [CB] })).statusCode).toBe(201)
  })
})

describe('a self-registered app on the sign-in and consent pages', () => {
  it('shows its host beside its name and an unverified notice, on the page where the password is typed', async () => {
    const reg = (await register({ client_name: 'Link Helper', redirect_uris: [CB] })).json()
    const browser = new Browser(t.app)
    const started = await browser.get(authorizeUrl(params(reg.client_id)))
    const signIn = await browser.get(String(started.headers.location))
    expect(signIn.body).toContain(
      'to continue to <strong class="app-name">Link Helper</strong> <span class="client-host">(phish.example)</span>',
    )
    expect(signIn.body).toMatch(
      /<div class="standing standing-unverified" role="note" data-standing="unverified">/,
    )
    expect(signIn.body).toContain('Unverified application.')

    const { page } = await authorizeAndSignIn(t, email, params(reg.client_id))
    expect(page.body).toContain(
      '<h1 id="title"><span class="app-title"><span class="app-name">Link Helper</span> <span class="client-host">(phish.example)</span></span> wants to use your account</h1>',
    )
    expect(page.body).toMatch(/class="standing standing-unverified"/)
  })

  it('the operator verifies it (audited): every page then shows it verified; unverify and reset follow', async () => {
    const reg = (await register({ client_name: 'Trusted Later', redirect_uris: [CB] })).json()
    const verified = await t.admin.inject({
      method: 'POST',
      url: `/admin/clients/${reg.client_id}/verify`,
      headers: adminHeaders,
    })
    expect(verified.statusCode).toBe(200)
    expect(verified.json()).toMatchObject({
      kind: 'dynamic',
      standing: 'verified',
      standing_override: 'verified',
      host: 'phish.example',
    })
    const { page } = await authorizeAndSignIn(t, email, params(reg.client_id))
    expect(page.body).toContain(
      '<h1 id="title"><span class="app-title"><span class="app-name">Trusted Later</span></span> wants to use your account</h1>',
    )
    expect(page.body).toMatch(/class="standing standing-verified"/)
    // Its name is now the operator's: nobody else may register it.
    expect((await register({ client_name: 'Trusted Later', redirect_uris: [CB] })).statusCode).toBe(400)

    const audit = await t.admin.inject({
      method: 'GET',
      url: `/admin/audit?client_id=${reg.client_id}&type=client.standing_changed`,
      headers: adminHeaders,
    })
    expect(audit.json().events[0]).toMatchObject({
      type: 'client.standing_changed',
      actor: { kind: 'operator' },
      details: { standing: 'verified', previous_standing: 'unverified', override: 'verified' },
    })

    const list = await t.admin.inject({ method: 'GET', url: '/admin/clients', headers: adminHeaders })
    const registered = list.json().clients.find((c: { name: string }) => c.name === 'Acceptance App')
    expect(registered).toMatchObject({
      standing: 'verified',
      standing_override: null,
      host: 'acceptance.example',
    })
    const demoted = await t.admin.inject({
      method: 'POST',
      url: `/admin/clients/${registered.client_id}/unverify`,
      headers: adminHeaders,
    })
    expect(demoted.json()).toMatchObject({ kind: 'registered', standing: 'unverified' })
    const reset = await t.admin.inject({
      method: 'DELETE',
      url: `/admin/clients/${registered.client_id}/standing`,
      headers: adminHeaders,
    })
    expect(reset.json()).toMatchObject({ standing: 'verified', standing_override: null })
    const missing = await t.admin.inject({
      method: 'POST',
      url: '/admin/clients/nosuchclient1/verify',
      headers: adminHeaders,
    })
    expect(missing.statusCode).toBe(404)
  })
})

describe('a metadata document that borrows a name', () => {
  it('is accepted, and shown by its host instead of the name it claims', async () => {
    const id = server.url('/clients/borrower.json')
    server.publish('/clients/borrower.json', clientDocument(id, { client_name: 'Acceptance App' }))
    const { page } = await authorizeAndSignIn(t, email, params(id, 'https://agent.example/callback'))
    expect(page.statusCode).toBe(200)
    const host = new URL(id).host
    expect(page.body).toContain(
      `<h1 id="title"><span class="app-title"><span class="app-name">${host}</span> <span class="client-host">(${host})</span></span> wants to use your account</h1>`,
    )
    expect(page.body).not.toContain('<span class="app-name">Acceptance App</span>')
    expect(page.body).toMatch(/class="standing standing-vouched"/)
    expect(page.body).toContain('name reserved here')
  })
})

describe('/account/apps tells whether the app holds a live token', () => {
  it('connected after the code exchange; signed out once the app revokes its token (RFC 7009); gone once removed', async () => {
    const reg = (await register({ client_name: 'Sign-out Tester', redirect_uris: [CB] })).json()
    const { browser, page } = await authorizeAndSignIn(t, email, params(reg.client_id))
    const answer = await allow(browser, page)
    const listApps = async () =>
      (await browser.get('/api/account/apps'))
        .json()
        .apps.find((a: { client_id: string }) => a.client_id === reg.client_id)

    // Consented, no token yet: signed out (it may come back without asking).
    expect(await listApps()).toMatchObject({
      connected: false,
      state: 'signed_out',
      standing: 'unverified',
      host: 'phish.example',
    })
    const token = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: locationParams(answer).code!,
      code_verifier: VERIFIER,
      client_id: reg.client_id,
    })
    expect(token.statusCode).toBe(200)
    expect(await listApps()).toMatchObject({
      connected: true,
      state: 'connected',
      standing_label: 'Unverified',
    })
    const connectedPage = await browser.get('/account/apps')
    expect(connectedPage.body).toContain('Connected: it can use your account now.')
    expect(connectedPage.body).toContain('<span class="client-host">(phish.example)</span>')

    const revoked = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      payload: { token: token.json().refresh_token, client_id: reg.client_id },
    })
    expect(revoked.statusCode).toBe(200)
    expect(await listApps()).toMatchObject({ connected: false, state: 'signed_out' })
    const signedOutPage = await browser.get('/account/apps')
    expect(signedOutPage.body).toContain('Signed out: it holds no access now')
    expect(signedOutPage.body).not.toContain('Connected: it can use your account now.')
    // The activity page names it with its host and its standing too.
    const activity = (await browser.get('/account/activity')).body
    expect(activity).toMatch(
      /You allowed <strong>Sign-out Tester<\/strong> <span class="client-host">\(phish\.example\)<\/span>\s*<span class="standing-tag standing-tag-unverified">Unverified<\/span>/,
    )

    // Tokens again; once every one of them has expired, it is signed out too.
    // Consented before, an https redirect URI: the code comes at once, no page.
    const again = await authorizeAndSignIn(t, email, params(reg.client_id), browser)
    const second = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: locationParams(again.page).code!,
      code_verifier: VERIFIER,
      client_id: reg.client_id,
    })
    expect(second.statusCode).toBe(200)
    expect((await listApps()).connected).toBe(true)
    clock.advance(400 * 24 * 3600)
    await browser.signIn(email, PASSWORD)
    expect(await listApps()).toMatchObject({ connected: false, state: 'signed_out' })
  })

  it('lists verified apps first, then vouched, then unverified ones, each labelled', async () => {
    const browser = new Browser(t.app)
    await browser.signIn(email, PASSWORD)
    for (const [id, redirect] of [
      [server.url('/clients/borrower.json'), 'https://agent.example/callback'],
      [acceptanceAppId, 'https://acceptance.example/cb'],
    ] as const) {
      const { page } = await authorizeAndSignIn(t, email, params(id, redirect), browser)
      expect((await allow(browser, page)).statusCode).toBe(303)
    }
    const apps = (await browser.get('/api/account/apps')).json().apps as { standing: string }[]
    expect(apps.length).toBeGreaterThan(1)
    const page = (await browser.get('/account/apps')).body
    const order = [...page.matchAll(/<li class="connected-app" data-standing="(\w+)"/g)].map((m) => m[1])
    const rank = { verified: 0, vouched: 1, unverified: 2 } as Record<string, number>
    expect(order).toEqual([...order].sort((a, b) => rank[a!]! - rank[b!]!))
  })
})
