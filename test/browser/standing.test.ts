import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PASSWORD } from '../helpers/browser.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import { clientDocument, type DocumentServer, startDocumentServer } from '../helpers/document-server.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  DEMO_VERIFIER,
  expectNoHorizontalScroll,
  expectNoSeriousA11yViolations,
  newPage,
  screenshot,
  startWorld,
  waitForCallback,
} from '../helpers/playwright.js'
import { s256Challenge } from '../../src/lib/pkce.js'

/**
 * Issue 37: each standing (verified, vouched for by its host, unverified) as a person meets it on
 * the sign-in page, the consent page, the one-click Continue page (the callback is on loopback, so a
 * remembered consent is confirmed, RFC 8252 §8.6), /account/apps and /account/activity, at a phone's width and a
 * desktop's: the host beside the name for the apps the operator does not stand behind, the standing
 * in a box of its own; axe clean. Screenshots in test-results/standing-*.png.
 */

type Standing = 'verified' | 'vouched' | 'unverified'

describe.skipIf(!BROWSER_AVAILABLE)('an app’s standing on every page', () => {
  let world: BrowserWorld
  let documents: DocumentServer
  const clients = {} as Record<Standing, { id: string; name: string; host: string | undefined }>

  beforeAll(async () => {
    documents = await startDocumentServer()
    world = await startWorld({ env: { CLIENT_METADATA_TEST_CA: documents.caPath } })
    const redirectUri = world.callback.redirectUri
    const registered = await world.t.services.clients.createClient({
      name: 'Shortcut Stats',
      redirect_uris: [redirectUri],
    })
    clients.verified = { id: registered.id, name: 'Shortcut Stats', host: undefined }
    const documentId = documents.url('/clients/notes.json')
    documents.publish(
      '/clients/notes.json',
      clientDocument(documentId, { client_name: 'Notes Agent', redirect_uris: [redirectUri] }),
    )
    clients.vouched = { id: documentId, name: 'Notes Agent', host: new URL(documentId).host }
    const registration = await world.t.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      payload: { client_name: 'Link Helper', redirect_uris: [redirectUri] },
    })
    expect(registration.statusCode).toBe(201)
    clients.unverified = {
      id: registration.json().client_id,
      name: 'Link Helper',
      host: new URL(redirectUri).host,
    }
  })
  afterAll(async () => {
    await world?.close()
    await documents?.close()
  })

  const authorizeUrl = (clientId: string, state: string) =>
    `${world.base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: world.callback.redirectUri,
      scope: 'links:read',
      state,
      code_challenge: s256Challenge(DEMO_VERIFIER),
      code_challenge_method: 'S256',
    }).toString()}`

  for (const standing of ['verified', 'vouched', 'unverified'] as const) {
    for (const width of [390, 1280]) {
      it(
        `${standing} at ${width} px: sign-in, consent, Continue, account apps and activity`,
        async () => {
          const app = clients[standing]
          const email = `standing-${standing}-${width}-${Math.random().toString(36).slice(2, 8)}@example.com`
          await world.t.services.users.createUser({ email, password: PASSWORD })
          const { context, page } = await newPage(world.browser, {
            viewport: { width, height: width < 600 ? 844 : 900 },
          })
          const notice = page.locator(`.standing.standing-${standing}[role="note"]`).first()
          const shot = async (where: string) => {
            await expectNoSeriousA11yViolations(page)
            if (width < 600) await expectNoHorizontalScroll(page)
            await screenshot(page, `standing-${standing}-${where}-${width}`)
          }
          const expectHostBesideName = async () => {
            const heading = page.locator('h1, p:has(> .app-name)').filter({ has: page.locator('.app-name') })
            if (app.host) expect(await heading.first().textContent()).toContain(`(${app.host})`)
            else expect(await heading.locator('.client-host').count()).toBe(0)
          }

          await page.goto(authorizeUrl(app.id, `st-${standing}-${width}`))
          await page.getByLabel('Password').waitFor()
          expect(await page.locator('.app-name').first().textContent()).toBe(app.name)
          await expectHostBesideName()
          await notice.waitFor()
          await shot('sign-in')

          await page.getByLabel('Email').fill(email)
          await page.getByLabel('Password').fill(PASSWORD)
          await page.getByRole('button', { name: 'Sign in' }).click()
          await page.getByRole('button', { name: 'Allow' }).waitFor()
          await expectHostBesideName()
          await notice.waitFor()
          await shot('consent')
          await page.getByRole('button', { name: 'Allow' }).click()
          await waitForCallback(page, world)

          await page.goto(authorizeUrl(app.id, `st2-${standing}-${width}`))
          await page.getByRole('button', { name: 'Continue' }).waitFor()
          await expectHostBesideName()
          await notice.waitFor()
          await shot('continue')
          await page.getByRole('button', { name: 'Continue' }).click()
          await waitForCallback(page, world)

          await page.goto(`${world.base}/account/apps`)
          const entry = page.locator(`li.connected-app[data-standing="${standing}"]`)
          await entry.waitFor()
          if (app.host) expect(await entry.locator('h2').textContent()).toContain(`(${app.host})`)
          expect(await entry.locator('.standing').count()).toBe(1)
          // Codes were issued, never exchanged: it holds no token.
          expect(await entry.locator('.app-state').textContent()).toContain('Signed out')
          await shot('account-apps')

          // The activity page names the app the same way: its host and standing unless verified.
          await page.goto(`${world.base}/account/activity`)
          const allowed = page.locator('li', { hasText: `You allowed ${app.name}` }).first()
          await allowed.waitFor()
          if (app.host) {
            expect(await allowed.locator('.client-host').textContent()).toBe(`(${app.host})`)
            expect(await allowed.locator(`.standing-tag-${standing}`).count()).toBe(1)
          } else expect(await allowed.locator('.client-host, .standing-tag').count()).toBe(0)
          await shot('activity')
          await context.close()
        },
        BROWSER_TEST_TIMEOUT,
      )
    }
  }
})
