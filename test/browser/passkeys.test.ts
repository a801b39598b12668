import { createServer, type Server } from 'node:http'
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSKEY_NOT_ON_ACCOUNT } from '../../src/web/pages/sign-in.page.js'
import { adminHeaders } from '../helpers/app.js'
import { CookieJar, hiddenField } from '../helpers/browser.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import { freePort } from '../helpers/net.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoHorizontalScroll,
  expectNoSeriousA11yViolations,
  newPage,
  screenshot,
  seedBrowserWorld,
  signIn,
  signInAndAllow,
  startWorld,
  STEP_TIMEOUT,
  waitForCallback,
  PLATFORM_AUTHENTICATOR,
  virtualAuthenticator,
} from '../helpers/playwright.js'

/**
 * Passkeys in chromium with the DevTools protocol's virtual authenticator (a CTAP2 platform
 * authenticator with resident keys and user verification): register, sign out, sign in through a
 * third-party application's consent flow, passwordless, remove; the removed passkey refused, the
 * browser told to forget it, and no loop where it keeps offering it (the authenticator answers an
 * autofill request at once: a page that asked again by itself would go round, attempts counted on
 * the server); a passkey relayed by a look-alike site refused; the account area at phone and
 * desktop widths. The server's issuer is
 * http://localhost:PORT: WebAuthn needs a secure context on a domain name.
 */

const credentialsOf = async (cdp: CDPSession, authenticatorId: string) =>
  (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials

/** Card boxes of the page in order: each must start below the one before, with a gap. */
async function expectCardsApart(page: Page) {
  const boxes = await page.evaluate<{ top: number; bottom: number }[]>(
    `[...document.querySelectorAll('.account > .card')].map((c) => { const r = c.getBoundingClientRect(); return { top: r.top, bottom: r.bottom } })`,
  )
  for (let i = 1; i < boxes.length; i++)
    expect(boxes[i]!.top).toBeGreaterThanOrEqual(boxes[i - 1]!.bottom + 8)
}

/** Signs in with the password on `page` and adds a passkey there (its virtual authenticator's). */
async function addPasskey(page: Page, s: { email: string; password: string }) {
  await page.goto(`${world.base}/login?next=account-passkeys`)
  await signIn(page, s, { exact: true })
  await page.getByRole('button', { name: 'Add a passkey' }).click()
  await page.getByRole('status').filter({ hasText: 'Your passkey was added' }).waitFor()
}

/** Signs in with the password on a browser of its own and adds a passkey; answers the passkey. */
async function registeredPasskey(s: { email: string; password: string }) {
  const { context, page } = await newPage(world.browser)
  const { cdp, authenticatorId } = await virtualAuthenticator(context, page)
  await addPasskey(page, s)
  const [passkey] = await credentialsOf(cdp, authenticatorId)
  await context.close()
  return passkey!
}

/**
 * The ID of the next credential the authenticator deletes (as signalUnknownCredential has it do);
 * refused after a step's time, so that a page that never tells it fails as that, not as a hang.
 */
function credentialDeleted(cdp: CDPSession): Promise<string> {
  return new Promise((resolve, reject) => {
    const late = setTimeout(
      () => reject(new Error('the authenticator was never told to forget the passkey')),
      STEP_TIMEOUT,
    )
    cdp.once('WebAuthn.credentialDeleted', (e) => {
      clearTimeout(late)
      resolve(e.credentialId)
    })
  })
}

/** How many passkey sign-ins the server has refused for a passkey it does not hold (its audit trail). */
async function unknownPasskeyRefusals(): Promise<number> {
  const { events } = await world.t.services.audit.list({ eventTypes: ['passkey.refused'], limit: 100 })
  return events.filter((e) => e.details.ceremony === 'sign_in' && e.details.reason === 'unknown_passkey')
    .length
}

/**
 * Runs `act`, which has the page post a passkey to /login/passkey, and waits until the page the
 * server answers has loaded (its script run). Answers that answer's status.
 */
async function passkeyPosted(page: Page, act: () => Promise<unknown>): Promise<number> {
  const atPasskey = (url: string) => new URL(url).pathname === '/login/passkey'
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && atPasskey(r.url()))
  const shown = page.waitForEvent('framenavigated', (f) => f === page.mainFrame() && atPasskey(f.url()))
  await act()
  const status = (await answered).status()
  await shown
  await page.waitForLoadState('load')
  return status
}

let world: BrowserWorld

describe.skipIf(!BROWSER_AVAILABLE)('passkeys in chromium', () => {
  beforeAll(async () => {
    world = await startWorld({ onLocalhost: true })
  })
  afterAll(async () => world?.close())

  it(
    'registers a passkey, signs out, signs in with it through the consent flow, goes passwordless, removes it',
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const { context, page } = await newPage(world.browser)
      const first = await virtualAuthenticator(context, page)

      // Not signed in: the sign-in page, which comes back to the passkeys page.
      await page.goto(`${world.base}/account/passkeys`)
      await signIn(page, s, { exact: true })
      await page.getByRole('heading', { name: 'Passkeys', level: 1 }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'passkeys-1-none-yet')

      await page.getByLabel('Name').fill('This laptop')
      await page.getByRole('button', { name: 'Add a passkey' }).click()
      await page.getByRole('status').filter({ hasText: 'Your passkey was added' }).waitFor()
      await page.getByRole('heading', { name: 'This laptop' }).waitFor()
      const [passkey] = await credentialsOf(first.cdp, first.authenticatorId)
      expect(passkey!.isResidentCredential).toBe(true)
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'passkeys-2-added')

      // The person leaves this device (else its autofill would sign them in again at once).
      await first.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: first.authenticatorId })
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByLabel('Email').waitFor()
      await screenshot(page, 'passkeys-3-sign-in-page')
      await expectNoSeriousA11yViolations(page)

      // Another browser with the same passkey (synced): a third-party application's consent flow.
      // The sign-in page offers the passkey in the email field's autofill (conditional mediation),
      // which the virtual authenticator answers at once.
      const other = await newPage(world.browser)
      const second = await virtualAuthenticator(other.context, other.page)
      await second.cdp.send('WebAuthn.addCredential', {
        authenticatorId: second.authenticatorId,
        credential: passkey!,
      })
      await other.page.goto(s.authorizeUrl('state-passkey'))
      await other.page.getByRole('button', { name: 'Allow' }).click()
      const query = await waitForCallback(other.page, world)
      expect(query.get('state')).toBe('state-passkey')
      expect(query.get('code')).toBeTruthy()

      // Passwordless: turn password sign-in off; the password form then refuses the account.
      await other.page.goto(`${world.base}/account/password`)
      await other.page.getByRole('button', { name: 'Turn password sign-in off' }).click()
      await other.page.getByRole('status').filter({ hasText: 'Password sign-in is off' }).waitFor()
      await expectNoSeriousA11yViolations(other.page)
      await screenshot(other.page, 'passkeys-4-password-sign-in-off')

      await signIn(page, s, { exact: true })
      await expect
        .poll(() => page.getByRole('alert').first().textContent())
        .toBe('Email or password is incorrect')
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'passkeys-5-password-refused')

      // Back on the other browser, signed in with the passkey.
      await context.close()
      const { context: ctx, page: p } = other
      // Password sign-in back on, then the passkey is removed.
      await p.goto(`${world.base}/account/password`)
      await p.getByRole('button', { name: 'Turn password sign-in on' }).click()
      await p.getByRole('status').filter({ hasText: 'Password sign-in is on again' }).waitFor()
      await p.goto(`${world.base}/account/passkeys`)
      await p.getByRole('button', { name: 'Remove This laptop' }).click()
      await p.getByRole('status').filter({ hasText: 'Your passkey was removed' }).waitFor()
      expect(await world.t.services.passkeys.list(s.user.id)).toEqual([])

      await p.goto(`${world.base}/account/activity`)
      await p.getByText('Passkey This laptop was added').waitFor()
      await p.getByText('Passkey This laptop was removed').waitFor()
      await expectNoSeriousA11yViolations(p)
      await screenshot(p, 'passkeys-6-activity')

      // The removed passkey no longer signs in; the authenticator still holds it. The sign-in page's
      // autofill offers it (the authenticator answers at once): refused, the page says the passkey
      // is not on any account here, and tells the browser to forget it (signalUnknownCredential),
      // which this authenticator does.
      const refusedBefore = await unknownPasskeyRefusals()
      const forgotten = credentialDeleted(second.cdp)
      const signedOut = await passkeyPosted(p, () => p.getByRole('button', { name: 'Sign out' }).click())
      expect(signedOut).toBe(400)
      expect(await p.getByRole('alert').textContent()).toBe(PASSKEY_NOT_ON_ACCOUNT)
      expect(await forgotten).toBe(passkey!.credentialId)
      expect(await credentialsOf(second.cdp, second.authenticatorId)).toEqual([])
      expect(await unknownPasskeyRefusals()).toBe(refusedBefore + 1)
      await p.waitForLoadState('networkidle')
      expect(await unknownPasskeyRefusals()).toBe(refusedBefore + 1)
      await expectNoSeriousA11yViolations(p)
      await screenshot(p, 'passkeys-7-removed-passkey-refused')
      await ctx.close()

      // A browser that keeps offering it (no Signal API, or a password manager that ignores it): the
      // refusal page asks for no passkey by itself, so the server sees one attempt per page the
      // person acts on, not a loop; the button offers it again only when pressed.
      const keeps = await newPage(world.browser)
      await keeps.page.addInitScript('delete PublicKeyCredential.signalUnknownCredential')
      const third = await virtualAuthenticator(keeps.context, keeps.page)
      await third.cdp.send('WebAuthn.addCredential', {
        authenticatorId: third.authenticatorId,
        credential: passkey!,
      })
      const autofilled = await passkeyPosted(keeps.page, () => keeps.page.goto(`${world.base}/login`))
      expect(autofilled).toBe(400)
      expect(await keeps.page.getByRole('alert').textContent()).toBe(PASSKEY_NOT_ON_ACCOUNT)
      await keeps.page.waitForLoadState('networkidle')
      expect(await unknownPasskeyRefusals()).toBe(refusedBefore + 2)
      const pressed = await passkeyPosted(keeps.page, () =>
        keeps.page.getByRole('button', { name: 'Use a passkey' }).click(),
      )
      expect(pressed).toBe(400)
      expect(await keeps.page.getByRole('alert').textContent()).toBe(PASSKEY_NOT_ON_ACCOUNT)
      await keeps.page.waitForLoadState('networkidle')
      expect(await unknownPasskeyRefusals()).toBe(refusedBefore + 3)
      expect(await credentialsOf(third.cdp, third.authenticatorId)).toHaveLength(1)
      await keeps.page.getByRole('heading', { name: 'Sign in to linkauth' }).waitFor()
      await keeps.context.close()
    },
    BROWSER_TEST_TIMEOUT * 2,
  )

  it(
    'signs in with the "Use a passkey" button through the consent flow: no autofill, and after a wrong password',
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const passkey = await registeredPasskey(s)

      // A browser that does not offer passkeys in autofill (no conditional mediation): the button is
      // the way in, and it comes back to the third-party application's consent page.
      const plain = await newPage(world.browser)
      await plain.page.addInitScript(
        'PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false)',
      )
      const one = await virtualAuthenticator(plain.context, plain.page)
      await one.cdp.send('WebAuthn.addCredential', {
        authenticatorId: one.authenticatorId,
        credential: passkey,
      })
      await plain.page.goto(s.authorizeUrl('state-button'))
      await plain.page.getByRole('heading', { name: 'Sign in to linkauth' }).waitFor()
      await plain.page.getByRole('button', { name: 'Use a passkey' }).click()
      await plain.page.getByRole('button', { name: 'Allow' }).click()
      const query = await waitForCallback(plain.page, world)
      expect(query.get('state')).toBe('state-button')
      expect(query.get('code')).toBeTruthy()
      await plain.context.close()

      // Autofill's browser, where the person first typed a wrong password: the page after the refusal
      // offers no autofill, and the button signs in.
      const typed = await newPage(world.browser)
      const two = await virtualAuthenticator(typed.context, typed.page)
      await typed.page.goto(s.authorizeUrl('state-after-typo'))
      await signIn(typed.page, { email: s.email, password: 'not my password' }, { exact: true })
      await typed.page.getByRole('alert').filter({ hasText: 'Email or password is incorrect' }).waitFor()
      // The same passkey, its counter past the use above (a counter that does not grow is refused).
      await two.cdp.send('WebAuthn.addCredential', {
        authenticatorId: two.authenticatorId,
        credential: { ...passkey, signCount: passkey.signCount + 10 },
      })
      await typed.page.getByRole('button', { name: 'Use a passkey' }).click()
      // Consent was given above: the authorization request resumes straight to the application.
      await typed.page.getByRole('button', { name: 'Continue' }).click()
      expect((await waitForCallback(typed.page, world)).get('state')).toBe('state-after-typo')
      await typed.context.close()

      // Not driven here: the button pressed while autofill is still waiting. Chrome's virtual
      // authenticator answers a waiting autofill request as soon as a credential is added, so which
      // of the two signs in is a race (it failed a CI run that way). Either way the person is signed
      // in by a passkey; which request answered is not asserted anywhere.
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    "a passwordless account's reset link registers a new passkey on a new device; it signs in, the password does not",
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const lost = await registeredPasskey(s)
      await world.t.services.passkeys.setPasswordSignIn(s.user.id, false)
      const issued = await world.t.admin.inject({
        method: 'POST',
        url: `/admin/users/${s.user.id}/reset-link`,
        headers: adminHeaders,
      })
      const link = new URL(issued.json().url as string)

      // The person lost their device: on a new one, the operator's link offers a passkey, no password.
      const { context, page } = await newPage(world.browser)
      const { cdp, authenticatorId } = await virtualAuthenticator(context, page)
      await page.goto(`${world.base}${link.pathname}${link.search}`)
      await page.getByRole('heading', { name: 'Add a new passkey' }).waitFor()
      expect(await page.getByLabel('New password').count()).toBe(0)
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'passkeys-8-reset-link')
      await page.getByLabel('Name of the passkey').fill('New phone')
      await page.getByRole('button', { name: 'Add a passkey' }).click()
      await page.getByRole('status').filter({ hasText: 'Your new passkey New phone is added' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'passkeys-9-reset-done')
      const [fresh] = await credentialsOf(cdp, authenticatorId)
      expect(fresh!.credentialId).not.toBe(lost.credentialId)
      expect((await world.t.services.passkeys.list(s.user.id)).map((p) => p.name)).toContain('New phone')

      // The link works once.
      await page.goto(`${world.base}${link.pathname}${link.search}`)
      await page.getByRole('heading', { name: 'This link no longer works' }).waitFor()

      // The new passkey signs in through the consent flow (autofill on this device); the password
      // form still refuses the account, which stays passwordless.
      await page.goto(s.authorizeUrl('state-after-reset'))
      await page.getByRole('button', { name: 'Allow' }).click()
      expect((await waitForCallback(page, world)).get('state')).toBe('state-after-reset')
      const other = await newPage(world.browser)
      await other.page.goto(`${world.base}/login`)
      await signIn(other.page, s, { exact: true })
      await other.page.getByRole('alert').filter({ hasText: 'Email or password is incorrect' }).waitFor()
      expect(await world.t.services.passkeys.passwordSignIn(s.user.id)).toBe(false)
      await other.context.close()
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'a look-alike site relaying our challenge gets an assertion for its own origin and RP ID: refused',
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const { context, page } = await newPage(world.browser)
      const { cdp, authenticatorId } = await virtualAuthenticator(context, page)
      // The user's real passkey, registered on our site.
      await addPasskey(page, s)
      const [real] = await credentialsOf(cdp, authenticatorId)

      // The same key under the look-alike's RP ID (as if the person had registered there too).
      const phishPort = await freePort()
      const phish: Server = createServer((_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>Sign in</title><h1>Sign in</h1>')
      })
      await new Promise<void>((resolve) => phish.listen(phishPort, 'localhost', resolve))
      try {
        const phishRpId = 'linkauth-login.localhost'
        // On a fresh authenticator (Chrome allows one internal authenticator at a time).
        await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId })
        const other = await cdp.send('WebAuthn.addVirtualAuthenticator', PLATFORM_AUTHENTICATOR)
        await cdp.send('WebAuthn.addCredential', {
          authenticatorId: other.authenticatorId,
          credential: {
            ...real!,
            credentialId: real!.credentialId,
            rpId: phishRpId,
            signCount: real!.signCount + 1,
          },
        })

        // The look-alike's server fetches a real challenge from us for its own pre-session...
        const jar = new CookieJar()
        const login = await fetch(`${world.base}/login`)
        jar.storeLines(login.headers.getSetCookie())
        const csrf = hiddenField(await login.text(), 'csrf_token')
        const optionsRes = await fetch(`${world.base}/api/passkeys/sign-in-options`, {
          method: 'POST',
          headers: { cookie: jar.header(), 'x-csrf-token': csrf, 'content-type': 'application/json' },
          body: '{}',
        })
        const { challenge } = (await optionsRes.json()) as { challenge: string }

        // ...and has the person's browser sign it on the look-alike origin.
        await page.goto(`http://${phishRpId}:${phishPort}/`)
        const assertion = await page.evaluate<string>(
          `(async (challenge, rpId) => {
            const b = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))
            const e = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
            const c = await navigator.credentials.get({ publicKey: { challenge: b(challenge), rpId, userVerification: 'required' } })
            return JSON.stringify({ id: c.id, rawId: e(c.rawId), type: c.type, clientExtensionResults: {}, response: {
              clientDataJSON: e(c.response.clientDataJSON), authenticatorData: e(c.response.authenticatorData),
              signature: e(c.response.signature), userHandle: c.response.userHandle ? e(c.response.userHandle) : undefined } })
          })(${JSON.stringify(challenge)}, ${JSON.stringify(phishRpId)})`,
        )
        expect(JSON.parse(assertion).id).toBe(Buffer.from(real!.credentialId, 'base64').toString('base64url'))

        const relayed = await fetch(`${world.base}/login/passkey`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf_token: csrf, response: assertion }).toString(),
        })
        expect(relayed.status).toBe(400)
        expect(relayed.headers.getSetCookie().join(';')).not.toContain('linkauth_session=')
        const { events } = await world.t.services.audit.list({
          userId: s.user.id,
          eventTypes: ['passkey.refused'],
          limit: 5,
        })
        expect(events.map((e) => e.details.reason)).toEqual(['verification_failed'])
      } finally {
        await new Promise((resolve) => phish.close(resolve))
        await context.close()
      }
    },
    BROWSER_TEST_TIMEOUT,
  )

  for (const [label, viewport] of [
    ['phone', { width: 390, height: 844 }],
    ['desktop', { width: 1280, height: 800 }],
  ] as const) {
    it(
      `the account area at ${label} width: navigation, Sign out, cards apart, nothing scrolls sideways`,
      async () => {
        const s = await seedBrowserWorld(world, 'A connected application with a rather long name indeed')
        const { context, page } = await newPage(world.browser, { viewport })
        await virtualAuthenticator(context, page)
        await signInAndAllow(page, world, s, 'state-layout', { exact: true })
        await page.goto(`${world.base}/account/passkeys`)
        await page.getByRole('button', { name: 'Add a passkey' }).click()
        await page.getByRole('status').filter({ hasText: 'Your passkey was added' }).waitFor()

        for (const [path, name] of [
          ['/account/apps', 'Connected apps'],
          ['/account/passkeys', 'Passkeys'],
          ['/account/password', 'Password'],
          ['/account/activity', 'Recent activity'],
        ] as const) {
          await page.goto(`${world.base}${path}`)
          const nav = page.getByRole('navigation', { name: 'Your account' })
          expect(await nav.getByRole('link', { name, exact: true }).getAttribute('aria-current')).toBe('page')
          await page.getByRole('button', { name: 'Sign out' }).waitFor()
          await expectNoHorizontalScroll(page)
          await expectCardsApart(page)
          await expectNoSeriousA11yViolations(page)
          await screenshot(page, `account-${label}-${path.split('/').pop()}`)
        }
        await context.close()
      },
      BROWSER_TEST_TIMEOUT * 2,
    )
  }
})
