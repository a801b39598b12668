import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoSeriousA11yViolations,
  newPage,
  screenshot,
  seedBrowserWorld,
  signIn,
  startWorld,
  waitForCallback,
} from '../helpers/playwright.js'
import { LINKS_API, registerApi, SHOP_API } from '../helpers/resource-apis.js'

/**
 * RFC 8707 as a person sees it: the consent page names each API the application asks for, by its
 * registered name, beside what it may do there; the connected-apps page then lists those APIs.
 */
describe.skipIf(!BROWSER_AVAILABLE)('consent and connected apps name the APIs', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
    for (const api of [LINKS_API, SHOP_API]) await registerApi(world.t, api)
  })
  afterAll(async () => world?.close())

  it(
    'shows each API with its scopes on the consent page, then on /account/apps',
    async () => {
      const seeded = await seedBrowserWorld(world, 'Shop Sync')
      const url = new URL(seeded.authorizeUrl('state-apis', 'links:read ecommerce:write'))
      url.searchParams.append('resource', LINKS_API.resource)
      url.searchParams.append('resource', SHOP_API.resource)
      const { context, page } = await newPage(world.browser)
      try {
        await page.goto(url.href)
        await signIn(page, seeded)
        const apis = page.getByRole('list', { name: /these services/ })
        await apis.waitFor()
        const links = apis.getByRole('listitem').filter({ hasText: LINKS_API.name })
        const shop = apis.getByRole('listitem').filter({ hasText: SHOP_API.name })
        await expect(links.textContent()).resolves.toContain('Read your short links')
        await expect(links.textContent()).resolves.not.toContain('e-commerce')
        await expect(shop.textContent()).resolves.toContain('e-commerce')
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, 'consent-with-apis')
        await page.getByRole('button', { name: 'Allow' }).click()
        expect((await waitForCallback(page, world)).get('code')).toBeTruthy()

        await page.goto(`${world.base}/account/apps`)
        const entry = page.locator('li.connected-app').filter({ hasText: 'Shop Sync' })
        await expect(entry.textContent()).resolves.toContain(LINKS_API.name)
        await expect(entry.textContent()).resolves.toContain(SHOP_API.resource)
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, 'connected-apps-with-apis')
      } finally {
        await context.close()
      }
    },
    BROWSER_TEST_TIMEOUT,
  )
})
