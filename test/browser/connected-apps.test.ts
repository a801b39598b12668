import { existsSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
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
  waitForCallback,
} from '../helpers/playwright.js'

/**
 * The connected-apps page (/account/apps) as a person uses it. It runs once the page exists (its
 * routes file is merged); until then it is skipped.
 */
const PAGE_EXISTS = existsSync('src/accounts/connected-apps.routes.ts')

/** Opens /account/apps, signing in on the way when the page asks for it. */
async function openConnectedApps(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/account/apps`)
  if (await page.getByLabel('Password').isVisible()) {
    await signIn(page, { email, password })
    await page.waitForLoadState()
    if (!new URL(page.url()).pathname.startsWith('/account/apps')) await page.goto(`${base}/account/apps`)
  }
  await page.getByRole('heading', { level: 1 }).waitFor()
}

/** The Revoke button of the entry for `name`: named "Revoke <name>", or "Revoke" inside that entry. */
async function revokeButton(page: Page, name: string, others: string[]) {
  const named = page.getByRole('button', { name: `Revoke ${name}` })
  if ((await named.count()) === 1) return named
  let entry = page.locator('li, tr, article').filter({ hasText: name })
  for (const other of others) entry = entry.filter({ hasNotText: other })
  return entry.last().getByRole('button', { name: /^Revoke/ })
}

describe.skipIf(!BROWSER_AVAILABLE)('connected applications page', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    if (PAGE_EXISTS) world = await startWorld()
  })
  afterAll(async () => world?.close())

  it.skipIf(!PAGE_EXISTS)(
    'lists each connected app by name; Revoke removes it with a notice; the consent is asked again',
    async () => {
      const first = await seedBrowserWorld(world, 'Shortcut Stats')
      const { context, page } = await newPage(world.browser)
      await signInAndAllow(page, world, first, 'state-apps-1')

      // A second application for the same person.
      const second = await world.t.services.clients.createClient({
        name: 'Link Printer',
        redirect_uris: [world.callback.redirectUri],
      })
      const secondUrl = first.authorizeUrl('state-apps-2').replace(first.client.id, second.id)
      await page.goto(secondUrl)
      await page.getByRole('button', { name: 'Allow' }).click()
      await waitForCallback(page, world)

      await openConnectedApps(page, world.base, first.email, first.password)
      await expect.poll(() => page.getByText('Shortcut Stats').first().isVisible()).toBe(true)
      await expect.poll(() => page.getByText('Link Printer').first().isVisible()).toBe(true)
      expect(await page.getByRole('button', { name: /^Revoke/ }).count()).toBe(2)
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'connected-apps-1-list')

      await (await revokeButton(page, 'Shortcut Stats', ['Link Printer'])).click()
      await page.waitForLoadState()
      await expect.poll(() => page.getByRole('button', { name: /^Revoke/ }).count()).toBe(1)
      expect(await page.getByRole('button', { name: 'Revoke Shortcut Stats' }).count()).toBe(0)
      const notice = page.getByRole('status').or(page.locator('.notice')).first()
      expect(await notice.textContent()).toMatch(/Shortcut Stats|revoked|disconnected|removed/i)
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'connected-apps-2-revoked')

      // Revoked for real: the application has to ask again.
      await page.goto(first.authorizeUrl('state-apps-3'))
      await page.getByRole('button', { name: 'Allow' }).waitFor()

      await openConnectedApps(page, world.base, first.email, first.password)
      await (await revokeButton(page, 'Link Printer', [])).click()
      await page.waitForLoadState()
      await expect.poll(() => page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0)
      await expect
        .poll(() =>
          page
            .getByText(/no application|not connected any|no connected/i)
            .first()
            .isVisible(),
        )
        .toBe(true)
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'connected-apps-3-empty')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it.skipIf(!PAGE_EXISTS)(
    'fits a phone',
    async () => {
      const s = await seedBrowserWorld(world, 'A Rather Long Application Name For Small Screens')
      const { context, page } = await newPage(world.browser, {
        viewport: { width: 375, height: 667 },
        isMobile: true,
      })
      await signInAndAllow(page, world, s, 'state-apps-phone')
      await openConnectedApps(page, world.base, s.email, s.password)
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'connected-apps-phone')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
