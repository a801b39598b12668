import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { PASSKEY_NOT_ON_ACCOUNT, PASSKEY_SIGN_IN_FAILED } from '../../src/web/pages/sign-in.page.js'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { createRunningClock } from '../helpers/clock.js'
import { authorizeUrl, Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import {
  assertionResponse,
  createSoftCredential,
  registrationResponse,
  type SoftCredential,
} from '../helpers/software-authenticator.js'
import {
  PASSKEY_ORIGIN,
  PASSKEY_RP_ID,
  passkeySignIn,
  postAssertion,
  signInChallenge,
} from '../helpers/passkeys.js'

/**
 * Passkeys (issue 30) through app.inject with an honest software authenticator: registration in
 * the account area, sign-in on the consent flow, and the server's rules (WebAuthn L3 §7.1, §7.2).
 */

let t: TestApp
const clock = createRunningClock()
beforeAll(async () => {
  t = await buildTestApp({ clock, env: { ...GENEROUS_LIMITS } })
})
afterAll(async () => t?.close())

/** A signed-in browser on /account/passkeys: its page and the section's CSRF token. */
async function signedIn(email: string) {
  const browser = new Browser(t.app)
  expect((await browser.signIn(email, PASSWORD)).statusCode).toBe(303)
  const page = await browser.get('/account/passkeys')
  expect(page.statusCode).toBe(200)
  return { browser, csrf: hiddenField(page.body, 'csrf_token') }
}

/** Registers a new software passkey for the signed-in user; answers the credential. */
async function register(browser: Browser, csrf: string, userId: string, name = 'Laptop') {
  const res = await browser.postJson('/api/account/passkeys/options', csrf)
  expect(res.statusCode).toBe(200)
  const credential = createSoftCredential(PASSKEY_RP_ID, userId)
  const added = await browser.post('/account/passkeys', {
    csrf_token: csrf,
    name,
    response: registrationResponse(credential, res.json().challenge, { origin: PASSKEY_ORIGIN }),
  })
  expect(added.statusCode).toBe(303)
  expect(added.headers.location).toBe('/account/passkeys?done=added')
  return credential
}

async function refusals(userId: string) {
  const { events } = await t.services.audit.list({ userId, eventTypes: ['passkey.refused'], limit: 50 })
  return events.map((e) => e.details.reason)
}

describe('registering passkeys', () => {
  it('asks for user verification and a discoverable credential, no attestation, for the issuer RP ID', async () => {
    const s = await seed(t)
    const { browser, csrf } = await signedIn(s.email)
    const res = await browser.postJson('/api/account/passkeys/options', csrf)
    const o = res.json()
    expect(res.headers['cache-control']).toBe('no-store')
    expect(o.rp).toEqual({ id: PASSKEY_RP_ID, name: 'linkauth' })
    expect(o.attestation).toBe('none')
    expect(o.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' })
    expect(o.user.name).toBe(s.email)
    expect(o.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The section's CSRF token is required.
    expect((await browser.postJson('/api/account/passkeys/options', 'forged')).statusCode).toBe(403)
  })

  it('adds several passkeys, lists them with when added and last used, renames and removes one; audit rows in the history', async () => {
    const s = await seed(t)
    const { browser, csrf } = await signedIn(s.email)
    await register(browser, csrf, s.user.id, 'Laptop')
    await register(browser, csrf, s.user.id, 'Phone')
    let page = await browser.get('/account/passkeys?done=added')
    expect(page.body).toContain('Your passkey was added')
    expect(page.body).toContain('<h2>Laptop</h2>')
    expect(page.body).toContain('<h2>Phone</h2>')
    expect(page.body).toContain('Last used')
    const [laptop, phone] = await t.services.passkeys.list(s.user.id)
    expect(laptop!.name).toBe('Laptop')
    expect(laptop!.backupEligible).toBe(true)

    const renamed = await browser.post(`/account/passkeys/${laptop!.id}/rename`, {
      csrf_token: csrf,
      name: ' Work  laptop ',
    })
    expect(renamed.headers.location).toBe('/account/passkeys?done=renamed')
    const removed = await browser.post(`/account/passkeys/${phone!.id}/remove`, { csrf_token: csrf })
    expect(removed.headers.location).toBe('/account/passkeys?done=removed')
    expect((await t.services.passkeys.list(s.user.id)).map((p) => p.name)).toEqual(['Work laptop'])
    // Another user's session cannot touch them.
    const other = await seed(t)
    const stranger = await signedIn(other.email)
    await stranger.browser.post(`/account/passkeys/${laptop!.id}/remove`, { csrf_token: stranger.csrf })
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)

    page = await browser.get('/account/activity')
    expect(page.body).toContain('Passkey <strong>Laptop</strong> was added')
    expect(page.body).toContain('A passkey was renamed to <strong>Work laptop</strong>')
    expect(page.body).toContain('Passkey <strong>Phone</strong> was removed')
    expect((await stranger.browser.get('/account/activity')).body).not.toContain('was added')
  })

  it('needs a fresh check: after five minutes the password (or a passkey) is asked again', async () => {
    const s = await seed(t)
    const { browser, csrf } = await signedIn(s.email)
    clock.advance(6 * 60)
    let page = await browser.get('/account/passkeys')
    expect(page.body).toContain('First confirm it is you')
    expect((await browser.postJson('/api/account/passkeys/options', csrf)).statusCode).toBe(403)
    const wrong = await browser.post('/account/passkeys/confirm', { csrf_token: csrf, password: 'not it' })
    expect(wrong.statusCode).toBe(400)
    const right = await browser.post('/account/passkeys/confirm', { csrf_token: csrf, password: PASSWORD })
    expect(right.headers.location).toBe('/account/passkeys?done=confirmed')
    page = await browser.get('/account/passkeys')
    expect(page.body).toContain('Add a passkey</button>')
    const credential = await register(browser, csrf, s.user.id)

    // Later again, a passkey of theirs confirms it too.
    clock.advance(6 * 60)
    const res = await browser.postJson('/api/account/passkeys/confirm-options', csrf)
    expect(res.json().allowCredentials.map((c: { id: string }) => c.id)).toEqual([
      credential.id.toString('base64url'),
    ])
    const confirmed = await browser.post('/account/passkeys/confirm-passkey', {
      csrf_token: csrf,
      response: assertionResponse(credential, res.json().challenge, { origin: PASSKEY_ORIGIN }),
    })
    expect(confirmed.headers.location).toBe('/account/passkeys?done=confirmed')
  })

  it('refuses a registration from another origin, without user verification, or with a spent challenge', async () => {
    const s = await seed(t)
    const { browser, csrf } = await signedIn(s.email)
    const attempt = async (build: (challenge: string, c: SoftCredential) => string) => {
      const res = await browser.postJson('/api/account/passkeys/options', csrf)
      const c = createSoftCredential(PASSKEY_RP_ID, s.user.id)
      return browser.post('/account/passkeys', {
        csrf_token: csrf,
        name: 'x',
        response: build(res.json().challenge, c),
      })
    }
    expect(
      (await attempt((ch, c) => registrationResponse(c, ch, { origin: 'https://evil.example' }))).statusCode,
    ).toBe(400)
    expect(
      (
        await attempt((ch, c) =>
          registrationResponse(c, ch, { origin: PASSKEY_ORIGIN, rpId: 'evil.example' }),
        )
      ).statusCode,
    ).toBe(400)
    expect(
      (await attempt((ch, c) => registrationResponse(c, ch, { origin: PASSKEY_ORIGIN, userVerified: false })))
        .statusCode,
    ).toBe(400)
    const res = await browser.postJson('/api/account/passkeys/options', csrf)
    const c = createSoftCredential(PASSKEY_RP_ID, s.user.id)
    const response = registrationResponse(c, res.json().challenge, { origin: PASSKEY_ORIGIN })
    expect(
      (await browser.post('/account/passkeys', { csrf_token: csrf, name: 'a', response })).statusCode,
    ).toBe(303)
    const again = await browser.post('/account/passkeys', { csrf_token: csrf, name: 'b', response })
    expect(again.statusCode).toBe(400)
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)
    expect(await refusals(s.user.id)).toEqual([
      'unknown_challenge',
      'verification_failed',
      'verification_failed',
      'verification_failed',
    ])
  })
})

describe('signing in with a passkey', () => {
  it('signs in on the consent flow: a full sign-in that continues the authorization request', async () => {
    const s = await seed(t)
    const { browser: owner, csrf } = await signedIn(s.email)
    const credential = await register(owner, csrf, s.user.id)

    const app = new Browser(t.app)
    const start = await app.get(authorizeUrl(s.params))
    const requestId = new URL(start.headers.location as string, PASSKEY_ORIGIN).searchParams.get('request')!
    const login = await app.get(`/login?request=${requestId}`)
    expect(login.body).toContain('data-passkey="sign-in"')
    expect(login.body).toContain('autocomplete="username webauthn"')
    expect(login.headers['content-security-policy']).toContain("script-src 'self'")
    const csrfField = hiddenField(login.body, 'csrf_token')
    const o = (await app.postJson('/api/passkeys/sign-in-options', csrfField)).json()
    expect(o.rpId).toBe(PASSKEY_RP_ID)
    expect(o.userVerification).toBe('required')
    expect(o.allowCredentials).toEqual([])
    const before = (await t.services.metrics.passkeySignIns.get()).values[0]?.value ?? 0

    const signedInRes = await postAssertion(
      app,
      csrfField,
      assertionResponse(credential, o.challenge, { origin: PASSKEY_ORIGIN }),
      {
        request: requestId,
      },
    )
    expect(signedInRes.statusCode).toBe(303)
    expect(signedInRes.headers.location).toBe(`/oauth/authorize/continue?request=${requestId}`)
    const consent = await app.get(signedInRes.headers.location as string)
    expect(consent.body).toContain('Allow')
    expect((await t.services.metrics.passkeySignIns.get()).values[0]!.value).toBe(before + 1)
    const { events } = await t.services.audit.list({
      userId: s.user.id,
      eventTypes: ['sign_in.succeeded'],
      limit: 5,
    })
    expect(events[0]!.details).toEqual({ method: 'passkey' })
    const [passkey] = await t.services.passkeys.list(s.user.id)
    expect(passkey!.lastUsedAt).not.toBeNull()
  })

  it('refuses a replayed assertion, a challenge of another browser, and an expired challenge', async () => {
    const s = await seed(t)
    const { browser: owner, csrf } = await signedIn(s.email)
    const credential = await register(owner, csrf, s.user.id)

    const first = await signInChallenge(t.app)
    const assertion = assertionResponse(credential, first.challenge, { origin: PASSKEY_ORIGIN })
    expect((await postAssertion(first.browser, first.csrf, assertion)).statusCode).toBe(303)
    // The very same assertion again, from the same browser: its challenge is spent.
    const replay = await postAssertion(first.browser, first.csrf, assertion)
    expect(replay.statusCode).toBe(400)
    expect(replay.body).toContain('That passkey did not sign you in')
    expect(replay.headers['set-cookie'] ?? '').not.toContain('linkauth_session=')

    // A challenge handed to browser A, answered from browser B (a relayed challenge).
    const a = await signInChallenge(t.app)
    const b = await signInChallenge(t.app)
    const relayed = assertionResponse(credential, a.challenge, { origin: PASSKEY_ORIGIN })
    expect((await postAssertion(b.browser, b.csrf, relayed)).statusCode).toBe(400)
    // …which spent it: not even browser A can use it now.
    expect((await postAssertion(a.browser, a.csrf, relayed)).statusCode).toBe(400)

    const late = await signInChallenge(t.app)
    clock.advance(301)
    expect(
      (
        await postAssertion(
          late.browser,
          late.csrf,
          assertionResponse(credential, late.challenge, { origin: PASSKEY_ORIGIN }),
        )
      ).statusCode,
    ).toBe(400)
    expect(await refusals(s.user.id)).toEqual([
      'unknown_challenge',
      'unknown_challenge',
      'unknown_challenge',
      'unknown_challenge',
    ])
  })

  it('refuses an assertion for another origin or RP ID (a phishing page), without user verification, or signed by another key', async () => {
    const s = await seed(t)
    const { browser: owner, csrf } = await signedIn(s.email)
    const credential = await register(owner, csrf, s.user.id)
    const tries: [string, (challenge: string) => string][] = [
      [
        'phishing origin',
        (ch) => assertionResponse(credential, ch, { origin: 'https://linkauth.example.net' }),
      ],
      [
        'phishing RP ID',
        (ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, rpId: 'evil.example' }),
      ],
      [
        'both',
        (ch) => assertionResponse(credential, ch, { origin: 'https://evil.example', rpId: 'evil.example' }),
      ],
      ['no UV', (ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, userVerified: false })],
      [
        'registration type',
        (ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, type: 'webauthn.create' }),
      ],
      [
        'another key',
        (ch) =>
          assertionResponse({ ...createSoftCredential(PASSKEY_RP_ID, s.user.id), id: credential.id }, ch, {
            origin: PASSKEY_ORIGIN,
          }),
      ],
      [
        'wrong user handle',
        (ch) =>
          assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, userHandle: Buffer.alloc(16, 7) }),
      ],
      ['not JSON', () => '{"id":'],
    ]
    for (const [label, build] of tries) {
      const c = await signInChallenge(t.app)
      const res = await postAssertion(c.browser, c.csrf, build(c.challenge))
      expect(res.statusCode, label).toBe(400)
    }
    // The control: the same authenticator, honest, signs in.
    expect((await passkeySignIn(t.app, credential)).statusCode).toBe(303)
  })

  it('keeps the signature counter and backup flags (WebAuthn L3 §6.1.3): a counter that does not grow, or a changed BE flag, is refused', async () => {
    const s = await seed(t)
    const { browser: owner, csrf } = await signedIn(s.email)
    const res = await owner.postJson('/api/account/passkeys/options', csrf)
    const credential = createSoftCredential(PASSKEY_RP_ID, s.user.id, {
      signCount: 5,
      backupEligible: false,
      backedUp: false,
    })
    await owner.post('/account/passkeys', {
      csrf_token: csrf,
      name: 'Key',
      response: registrationResponse(credential, res.json().challenge, { origin: PASSKEY_ORIGIN }),
    })
    const signIn = async (build: (challenge: string) => string) => {
      const c = await signInChallenge(t.app)
      return (await postAssertion(c.browser, c.csrf, build(c.challenge))).statusCode
    }
    expect(await signIn((ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN }))).toBe(303) // counter 6
    expect(
      await signIn((ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, signCount: 6 })),
    ).toBe(400)
    expect(
      await signIn((ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, signCount: 3 })),
    ).toBe(400)
    credential.backupEligible = true
    expect(
      await signIn((ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, signCount: 10 })),
    ).toBe(400)
    credential.backupEligible = false
    credential.backedUp = false
    expect(
      await signIn((ch) => assertionResponse(credential, ch, { origin: PASSKEY_ORIGIN, signCount: 11 })),
    ).toBe(303)
    const row = await t.database.db
      .selectFrom('passkeys')
      .select(['sign_count', 'backed_up'])
      .where('user_id', '=', s.user.id)
      .executeTakeFirstOrThrow()
    expect(Number(row.sign_count)).toBe(11)
    expect(await refusals(s.user.id)).toEqual([
      'backup_eligibility_changed',
      'verification_failed',
      'verification_failed',
    ])
    const failures = await t.services.metrics.passkeyFailures.get()
    expect(failures.values.some((v) => v.labels.reason === 'backup_eligibility_changed')).toBe(true)
  })

  it('refuses a passkey removed from its account: says it is not on any account here, names it for the browser to forget, starts no autofill', async () => {
    const s = await seed(t)
    const { browser: owner, csrf } = await signedIn(s.email)
    const removed = await register(owner, csrf, s.user.id, 'Old phone')
    const kept = await register(owner, csrf, s.user.id, 'Laptop')
    const [old] = await t.services.passkeys.list(s.user.id)
    expect(old!.name).toBe('Old phone')
    await owner.post(`/account/passkeys/${old!.id}/remove`, { csrf_token: csrf })
    const alert = (body: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(body)?.[1]
    const passkeyForm = (body: string) => /<form[^>]*data-passkey="sign-in"[^>]*>/.exec(body)![0]
    // The control: a fresh sign-in page starts the autofill request and names no passkey.
    const fresh = passkeyForm((await new Browser(t.app).get('/login')).body)
    expect(fresh).toContain('data-passkey-autofill')
    expect(fresh).not.toContain('data-passkey-unknown')

    const refused = await passkeySignIn(t.app, removed)
    expect(refused.statusCode).toBe(400)
    expect(alert(refused.body)).toBe(PASSKEY_NOT_ON_ACCOUNT)
    const form = passkeyForm(refused.body)
    expect(form).toContain(`data-passkey-unknown="${removed.id.toString('base64url')}"`)
    expect(form).toContain(`data-passkey-rp-id="${PASSKEY_RP_ID}"`)
    expect(form).not.toContain('data-passkey-autofill')

    // A passkey the server holds, refused for another reason (signed for another origin): the usual
    // words, and nothing for the browser to forget.
    const c = await signInChallenge(t.app)
    const phished = await postAssertion(
      c.browser,
      c.csrf,
      assertionResponse(kept, c.challenge, { origin: 'https://linkauth.example.net' }),
    )
    expect(phished.statusCode).toBe(400)
    expect(alert(phished.body)).toBe(PASSKEY_SIGN_IN_FAILED)
    expect(passkeyForm(phished.body)).not.toContain('data-passkey-unknown')
    expect(passkeyForm(phished.body)).not.toContain('data-passkey-autofill')
    expect((await passkeySignIn(t.app, kept)).statusCode).toBe(303)
  })

  it('refuses options and assertions without the pre-session cookie the page was given', async () => {
    const c = await signInChallenge(t.app)
    const stranger = new Browser(t.app)
    expect((await stranger.postJson('/api/passkeys/sign-in-options', c.csrf)).statusCode).toBe(403)
    expect((await postAssertion(stranger, c.csrf, '{}')).statusCode).toBe(403)
  })
})

describe('passwordless accounts', () => {
  it('turns password sign-in off only with a passkey; then the password form answers as for a wrong password', async () => {
    const s = await seed(t)
    const { browser } = await signedIn(s.email)
    let page = await browser.get('/account/password')
    const csrf = hiddenField(page.body, 'csrf_token')
    expect(page.body).toContain('add a passkey</a> first')
    const early = await browser.post('/account/password/sign-in', { csrf_token: csrf, enabled: 'false' })
    expect(early.statusCode).toBe(409)

    const passkeysPage = await browser.get('/account/passkeys')
    const credential = await register(browser, hiddenField(passkeysPage.body, 'csrf_token'), s.user.id)
    const off = await browser.post('/account/password/sign-in', { csrf_token: csrf, enabled: 'false' })
    expect(off.statusCode).toBe(200)
    expect(off.body).toContain('Password sign-in is off')

    const wrongPassword = await new Browser(t.app).signIn(s.email, 'not the password')
    const rightPassword = await new Browser(t.app).signIn(s.email, PASSWORD)
    expect(rightPassword.statusCode).toBe(400)
    expect(rightPassword.statusCode).toBe(wrongPassword.statusCode)
    const alert = (body: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(body)?.[1]
    expect(alert(rightPassword.body)).toBe('Email or password is incorrect')
    expect(alert(rightPassword.body)).toBe(alert(wrongPassword.body))
    const { events } = await t.services.audit.list({
      userId: s.user.id,
      eventTypes: ['sign_in.failed'],
      limit: 5,
    })
    expect(events[0]!.details).toEqual({ reason: 'password_sign_in_off' })

    // The passkey still signs in; the last one cannot be removed while passwords are off.
    expect((await passkeySignIn(t.app, credential)).statusCode).toBe(303)
    const [passkey] = await t.services.passkeys.list(s.user.id)
    const keep = await browser.post(`/account/passkeys/${passkey!.id}/remove`, {
      csrf_token: hiddenField(passkeysPage.body, 'csrf_token'),
    })
    expect(keep.statusCode).toBe(409)
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)

    page = await browser.post('/account/password/sign-in', { csrf_token: csrf, enabled: 'true' })
    expect((await new Browser(t.app).signIn(s.email, PASSWORD)).statusCode).toBe(303)

    const history = (await browser.get('/account/activity')).body
    expect(history).toContain('Signing in with your password was turned off')
    expect(history).toContain('Signing in with your password was turned on')
    // Recovery: with password sign-in off, the operator's reset link registers a passkey and sets no
    // password (test/accounts/passkey-reset.test.ts).
    await browser.post('/account/password/sign-in', { csrf_token: csrf, enabled: 'false' })
    const { url } = await t.services.users.issueResetLink(s.user.id)
    expect(
      await t.services.users.resetPassword(new URL(url).searchParams.get('token')!, 'a new password 123'),
    ).toBe(false)
    expect((await new Browser(t.app).signIn(s.email, 'a new password 123')).statusCode).toBe(400)
  })
})

describe('one account area', () => {
  it('every account page has the navigation, the current section marked, and Sign out', async () => {
    const s = await seed(t)
    const { browser } = await signedIn(s.email)
    for (const [path, label] of [
      ['/account/apps', 'Connected apps'],
      ['/account/passkeys', 'Passkeys'],
      ['/account/password', 'Password'],
      ['/account/activity', 'Recent activity'],
    ] as const) {
      const page = await browser.get(path)
      expect(page.statusCode, path).toBe(200)
      expect(page.body).toContain('<nav class="account-nav" aria-label="Your account">')
      expect(page.body).toMatch(new RegExp(`<a href="${path}" aria-current="page">${label}</a>`))
      expect(page.body).toContain('<form method="post" action="/logout">')
      const signOut = await browser.post('/logout', {
        csrf_token: hiddenField(page.body.slice(page.body.indexOf('action="/logout"')), 'csrf_token'),
      })
      expect(signOut.statusCode).toBe(303)
      expect((await browser.get(path)).statusCode).toBe(303)
      expect((await browser.signIn(s.email, PASSWORD)).statusCode).toBe(303)
    }
  })
})

describe('operator', () => {
  it("lists a user's passkeys and removes one through the admin API (audited as the operator)", async () => {
    const s = await seed(t)
    const { browser, csrf } = await signedIn(s.email)
    await register(browser, csrf, s.user.id, 'Lost phone')
    const list = await t.admin.inject({
      method: 'GET',
      url: `/admin/users/${s.user.id}/passkeys`,
      headers: adminHeaders,
    })
    expect(list.statusCode).toBe(200)
    const body = list.json()
    expect(body.password_sign_in).toBe(true)
    expect(body.passkeys).toEqual([expect.objectContaining({ name: 'Lost phone', last_used_at: null })])
    expect(JSON.stringify(body)).not.toMatch(/public_key|credential/)
    const url = `/admin/users/${s.user.id}/passkeys/${body.passkeys[0].id}`
    expect((await t.admin.inject({ method: 'DELETE', url, headers: adminHeaders })).statusCode).toBe(204)
    expect((await t.admin.inject({ method: 'DELETE', url, headers: adminHeaders })).statusCode).toBe(404)
    expect(
      (await t.admin.inject({ method: 'GET', url: `/admin/users/${s.user.id}/passkeys` })).statusCode,
    ).toBe(401)
    const { events } = await t.services.audit.list({
      userId: s.user.id,
      eventTypes: ['passkey.removed'],
      limit: 5,
    })
    expect(events[0]!.actorKind).toBe('operator')
  })
})

describe('PASSKEYS setting', () => {
  it('defaults on for https and http://localhost, off for another http host; refuses on where WebAuthn cannot work', () => {
    const config = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env })
    expect(config({ ISSUER: 'https://auth.example.com' })).toMatchObject({
      passkeys: true,
      passkeyRpId: 'auth.example.com',
    })
    expect(config({ ISSUER: 'http://localhost:3000' }).passkeys).toBe(true)
    expect(config({ ISSUER: 'http://127.0.0.1:3000' }).passkeys).toBe(false)
    expect(config({ ISSUER: 'https://auth.example.com', PASSKEYS: 'off' }).passkeys).toBe(false)
    expect(config({ ISSUER: 'https://auth.example.com', PASSKEY_RP_ID: 'example.com' }).passkeyRpId).toBe(
      'example.com',
    )
    expect(() => config({ ISSUER: 'https://auth.example.com', PASSKEY_RP_ID: 'other.com' })).toThrow(
      /PASSKEY_RP_ID/,
    )
    expect(() => config({ ISSUER: 'https://auth.example.com', PASSKEY_RP_ID: 'ample.com' })).toThrow(
      /PASSKEY_RP_ID/,
    )
    expect(() => config({ ISSUER: 'http://auth.example.com', PASSKEYS: 'on' })).toThrow(/PASSKEYS/)
    expect(() => config({ ISSUER: 'http://127.0.0.1:3000', PASSKEYS: 'on' })).toThrow(/PASSKEYS/)
  })

  it('off: no passkey form, no options, no passkeys section', async () => {
    const off = await buildTestApp({ database: t.database, env: { PASSKEYS: 'off' } })
    try {
      const s = await seed(off)
      const browser = new Browser(off.app)
      const login = await browser.get('/login')
      expect(login.body).not.toContain('data-passkey')
      expect(login.body).not.toContain('<script')
      expect(login.headers['content-security-policy']).not.toContain('script-src')
      const csrf = hiddenField(login.body, 'csrf_token')
      const res = await off.app.inject({
        method: 'POST',
        url: '/api/passkeys/sign-in-options',
        headers: { cookie: browser.jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
        payload: '{}',
      })
      expect(res.statusCode).toBe(404)
      expect(res.headers['content-type']).toContain('application/problem+json')
      await browser.signIn(s.email, PASSWORD)
      expect((await browser.get('/account/passkeys')).statusCode).toBe(404)
      expect((await browser.get('/account/apps')).body).not.toContain('href="/account/passkeys"')
    } finally {
      await off.close()
    }
  })
})
