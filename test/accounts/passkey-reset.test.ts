import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, hiddenField, PASSWORD, seed } from '../helpers/browser.js'
import { createRunningClock } from '../helpers/clock.js'
import { createSoftCredential, registrationResponse } from '../helpers/software-authenticator.js'
import { PASSKEY_ORIGIN, PASSKEY_RP_ID, passkeySignIn } from '../helpers/passkeys.js'

/**
 * The operator's reset link for a passwordless account (issue 30): it registers a new passkey and the
 * account stays passwordless; for an account whose password signs in it sets a password, as before.
 * Driven through app.inject with the honest software authenticator of test/accounts/passkeys.test.ts.
 */

const NEW_PASSWORD = 'a brand new password'

let t: TestApp
const clock = createRunningClock()
beforeAll(async () => {
  t = await buildTestApp({ clock, env: { ...GENEROUS_LIMITS } })
})
afterAll(async () => t?.close())

/**
 * A user who connected an application, signed in in a browser that stays signed in, registered a
 * passkey there and turned password sign-in off (`passwordless`).
 */
async function account(passwordless: boolean) {
  const s = await seed(t)
  const browser = new Browser(t.app)
  const start = await browser.get(authorizeUrl(s.params))
  const requestId = new URL(start.headers.location as string, PASSKEY_ORIGIN).searchParams.get('request')!
  expect((await browser.signIn(s.email, PASSWORD, requestId)).statusCode).toBe(303)
  const consent = await browser.get(`/oauth/authorize/continue?request=${requestId}`)
  const allowed = await browser.post('/oauth/authorize', {
    request: requestId,
    csrf_token: hiddenField(consent.body, 'csrf_token'),
    decision: 'allow',
  })
  expect(allowed.statusCode).toBe(303)
  const csrf = hiddenField((await browser.get('/account/passkeys')).body, 'csrf_token')
  const o = await browser.postJson('/api/account/passkeys/options', csrf)
  const old = createSoftCredential(PASSKEY_RP_ID, s.user.id)
  const added = await browser.post('/account/passkeys', {
    csrf_token: csrf,
    name: 'Lost phone',
    response: registrationResponse(old, o.json().challenge, { origin: PASSKEY_ORIGIN }),
  })
  expect(added.statusCode).toBe(303)
  if (passwordless) await t.services.passkeys.setPasswordSignIn(s.user.id, false)
  return { ...s, browser, old }
}

/** The operator issues a link through the admin API, as `linkauth users reset-link` does. */
async function resetLink(userId: string): Promise<{ url: string; token: string }> {
  const res = await t.admin.inject({
    method: 'POST',
    url: `/admin/users/${userId}/reset-link`,
    headers: adminHeaders,
  })
  expect(res.statusCode).toBe(201)
  const url = new URL(res.json().url)
  return { url: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! }
}

/** A fresh browser opening the link: its page, pre-session CSRF token, and a registration challenge. */
async function openLink(link: { url: string; token: string }, browser = new Browser(t.app)) {
  const page = await browser.get(link.url)
  // A link that no longer works shows no form: the sign-in page gives this browser its token.
  const csrf = hiddenField(
    page.statusCode === 200 ? page.body : (await browser.get('/login')).body,
    'csrf_token',
  )
  const res = await browser.postJson('/api/passkeys/reset-options', csrf, { token: link.token })
  return { browser, page, csrf, res, challenge: res.json().challenge as string }
}

const postPasskey = (
  opened: { browser: Browser; csrf: string },
  token: string,
  response: string,
  name = 'New laptop',
) => opened.browser.post('/account/reset-password', { csrf_token: opened.csrf, token, name, response })

const eventsOf = async (userId: string, type: 'passkey.reset' | 'passkey.registered' | 'passkey.refused') =>
  (await t.services.audit.list({ userId, eventTypes: [type], limit: 10 })).events

describe("a passwordless account's reset link", () => {
  it('registers a new passkey: no password, the account stays passwordless, sessions end, apps disconnect, audited', async () => {
    const s = await account(true)
    const link = await resetLink(s.user.id)
    const opened = await openLink(link)
    expect(opened.page.statusCode).toBe(200)
    expect(opened.page.headers['cache-control']).toBe('no-store')
    expect(opened.page.headers['content-security-policy']).toContain("script-src 'self'")
    expect(opened.page.body).toContain('Add a new passkey')
    expect(opened.page.body).toContain('data-passkey="reset"')
    expect(opened.page.body).not.toContain('new_password')
    expect(opened.res.statusCode).toBe(200)
    expect(opened.res.headers['cache-control']).toBe('no-store')
    const o = opened.res.json()
    expect(o.rp).toEqual({ id: PASSKEY_RP_ID, name: 'linkauth' })
    expect(o.user.name).toBe(s.email)
    expect(o.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' })
    expect(o.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([s.old.id.toString('base64url')])

    const fresh = createSoftCredential(PASSKEY_RP_ID, s.user.id)
    const done = await postPasskey(
      opened,
      link.token,
      registrationResponse(fresh, opened.challenge, { origin: PASSKEY_ORIGIN }),
    )
    expect(done.statusCode).toBe(200)
    expect(done.body).toContain('Passkey added')
    expect(done.body).toContain('stays passwordless')

    // The new passkey signs in, the old one still does (the operator removes a lost one), the
    // password does not: the account is still passwordless, its password unchanged.
    expect((await t.services.passkeys.list(s.user.id)).map((p) => p.name)).toEqual([
      'Lost phone',
      'New laptop',
    ])
    expect(await t.services.passkeys.passwordSignIn(s.user.id)).toBe(false)
    expect((await passkeySignIn(t.app, fresh)).statusCode).toBe(303)
    expect((await new Browser(t.app).signIn(s.email, PASSWORD)).statusCode).toBe(400)

    // Every session ended (the browser signed in before is signed out); the application disconnected.
    expect((await s.browser.get('/account/apps')).statusCode).toBe(303)
    const grant = await t.database.db
      .selectFrom('grants')
      .select('revoked_at')
      .where('user_id', '=', s.user.id)
      .executeTakeFirstOrThrow()
    expect(grant.revoked_at).not.toBeNull()

    const [reset] = await eventsOf(s.user.id, 'passkey.reset')
    expect(reset!.details).toEqual({ name: 'New laptop', sessions_ended: 1, apps_disconnected: 1 })
    expect(reset!.actorKind).toBe('user')
    const [registered] = await eventsOf(s.user.id, 'passkey.registered')
    expect(registered!.details).toMatchObject({ name: 'New laptop', via: 'reset' })

    // Once only: the page, the options and the form all say the link no longer works.
    expect((await new Browser(t.app).get(link.url)).statusCode).toBe(400)
    const second = await openLink(link)
    expect(second.page.body).toContain('This link no longer works')
    expect(second.res.statusCode).toBe(404)
    const replay = await postPasskey(
      opened,
      link.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), opened.challenge, {
        origin: PASSKEY_ORIGIN,
      }),
    )
    expect(replay.statusCode).toBe(400)
    expect(replay.body).toContain('This link no longer works')
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(2)

    // The user's own history says what happened.
    const history = await t.services.connectedApps.history(s.user.id)
    expect(history.map((e) => e.type)).toContain('passkey.reset')
  })

  it('never sets a password, and a failed ceremony leaves the link usable until it expires', async () => {
    const s = await account(true)
    const link = await resetLink(s.user.id)
    const opened = await openLink(link)

    // A password posted to this link (a hand-made form) sets nothing.
    const password = await opened.browser.post('/account/reset-password', {
      csrf_token: opened.csrf,
      token: link.token,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(password.statusCode).toBe(400)
    expect(password.body).toContain('Add a new passkey')
    expect(await t.services.users.resetPassword(link.token, NEW_PASSWORD)).toBe(false)
    expect((await new Browser(t.app).signIn(s.email, NEW_PASSWORD)).statusCode).toBe(400)

    // Another origin (a look-alike site), no user verification, a bad name: refused, link intact.
    const phished = await postPasskey(
      opened,
      link.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), opened.challenge, {
        origin: 'https://linkauth-login.example',
      }),
    )
    expect(phished.statusCode).toBe(400)
    expect(phished.body).toContain('No passkey was added')
    const next = await openLink(link, opened.browser)
    const noUv = await postPasskey(
      next,
      link.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), next.challenge, {
        origin: PASSKEY_ORIGIN,
        userVerified: false,
      }),
    )
    expect(noUv.statusCode).toBe(400)
    const badName = await postPasskey(next, link.token, '{}', '   ')
    expect(badName.statusCode).toBe(400)
    expect(badName.body).toContain('1 to 64 characters')
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)
    // The look-alike origin and the missing user verification (a bad name never reaches a ceremony).
    expect((await eventsOf(s.user.id, 'passkey.refused')).map((e) => e.details)).toEqual([
      { ceremony: 'reset', reason: 'verification_failed' },
      { ceremony: 'reset', reason: 'verification_failed' },
    ])
    expect((await s.browser.get('/account/apps')).statusCode).toBe(200)

    // Still usable within its 30 minutes; not after.
    clock.advance(29 * 60)
    expect((await new Browser(t.app).get(link.url)).statusCode).toBe(200)
    const late = await openLink(link)
    clock.advance(2 * 60)
    const expired = await postPasskey(
      late,
      link.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), late.challenge, {
        origin: PASSKEY_ORIGIN,
      }),
    )
    expect(expired.statusCode).toBe(400)
    expect(expired.body).toContain('This link no longer works')
    expect((await openLink(link)).res.statusCode).toBe(404)
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)
  })

  it('binds the ceremony to the link and the browser that opened it; refuses a forged CSRF token', async () => {
    const s = await account(true)
    const first = await resetLink(s.user.id)
    const second = await resetLink(s.user.id)
    const a = await openLink(first)
    const b = await openLink(first)
    // A challenge handed to browser A does not answer in browser B, nor for the other link.
    const stolen = await postPasskey(
      b,
      first.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), a.challenge, {
        origin: PASSKEY_ORIGIN,
      }),
    )
    expect(stolen.statusCode).toBe(400)
    const a2 = await openLink(first, a.browser)
    const otherLink = await postPasskey(
      a2,
      second.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), a2.challenge, {
        origin: PASSKEY_ORIGIN,
      }),
    )
    expect(otherLink.statusCode).toBe(400)
    expect((await eventsOf(s.user.id, 'passkey.refused')).map((e) => e.details.reason)).toEqual([
      'unknown_challenge',
      'unknown_challenge',
    ])
    const forged = await a.browser.postJson('/api/passkeys/reset-options', 'forged', { token: first.token })
    expect(forged.statusCode).toBe(403)
    expect(forged.headers['content-type']).toContain('application/problem+json')
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)

    // The right pairing works; using one link voids the other.
    const a3 = await openLink(second, a.browser)
    const ok = await postPasskey(
      a3,
      second.token,
      registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), a3.challenge, {
        origin: PASSKEY_ORIGIN,
      }),
    )
    expect(ok.statusCode).toBe(200)
    expect((await openLink(first)).res.statusCode).toBe(404)
  })

  it('two uses at once: exactly one registers its passkey', async () => {
    const s = await account(true)
    const link = await resetLink(s.user.id)
    const one = await openLink(link)
    const two = await openLink(link)
    const results = await Promise.all(
      [one, two].map((opened) =>
        postPasskey(
          opened,
          link.token,
          registrationResponse(createSoftCredential(PASSKEY_RP_ID, s.user.id), opened.challenge, {
            origin: PASSKEY_ORIGIN,
          }),
        ),
      ),
    )
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400])
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(2)
    expect(await eventsOf(s.user.id, 'passkey.reset')).toHaveLength(1)
  })
})

describe('the reset link of an account whose password signs in', () => {
  it('sets a password as before; offers and accepts no passkey', async () => {
    const s = await account(false)
    const link = await resetLink(s.user.id)
    const opened = await openLink(link)
    expect(opened.page.body).toContain('Set a new password')
    expect(opened.page.body).not.toContain('data-passkey')
    expect(opened.res.statusCode).toBe(404)
    const passkeyInstead = await postPasskey(opened, link.token, '{}')
    expect(passkeyInstead.statusCode).toBe(400)
    expect(passkeyInstead.body).toContain('The new password must have')
    const set = await opened.browser.post('/account/reset-password', {
      csrf_token: opened.csrf,
      token: link.token,
      new_password: NEW_PASSWORD,
      confirm_password: NEW_PASSWORD,
    })
    expect(set.statusCode).toBe(200)
    expect(set.body).toContain('Password set')
    expect((await new Browser(t.app).signIn(s.email, NEW_PASSWORD)).statusCode).toBe(303)
    expect(await t.services.passkeys.list(s.user.id)).toHaveLength(1)
  })
})

describe('with PASSKEYS=off', () => {
  it("a passwordless account's link sets a password and turns password sign-in back on: the only way back", async () => {
    const s = await account(true)
    const off = await buildTestApp({ database: t.database, env: { PASSKEYS: 'off', ...GENEROUS_LIMITS } })
    try {
      const { url } = await off.services.users.issueResetLink(s.user.id)
      const link = new URL(url)
      const browser = new Browser(off.app)
      const page = await browser.get(`${link.pathname}${link.search}`)
      expect(page.body).toContain('Set a new password')
      expect(page.body).not.toContain('data-passkey')
      const set = await browser.post('/account/reset-password', {
        csrf_token: hiddenField(page.body, 'csrf_token'),
        token: link.searchParams.get('token')!,
        new_password: NEW_PASSWORD,
        confirm_password: NEW_PASSWORD,
      })
      expect(set.statusCode).toBe(200)
      expect(await off.services.passkeys.passwordSignIn(s.user.id)).toBe(true)
      expect((await new Browser(off.app).signIn(s.email, NEW_PASSWORD)).statusCode).toBe(303)
    } finally {
      await off.close()
    }
  })
})
