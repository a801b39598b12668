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
  startWorld,
  waitForCallback,
} from '../helpers/playwright.js'

/**
 * What the operator registered about an application (PATCH /admin/clients/:id) as a person meets it:
 * on the consent page and on the connected-apps page, the description as plain text and the links
 * opening in a new tab without handing the page over (rel="noopener noreferrer").
 */
const DESCRIPTION = 'Prints your <b>links</b> as QR codes & posters.'
const LINKS = {
  Website: 'https://printer.example/',
  'Privacy policy': 'https://printer.example/privacy',
  'Terms of service': 'https://printer.example/terms',
}

/** The links of the "About …" list: label, href, target and rel, as the page has them. */
async function aboutLinks(page: Page) {
  return page.evaluate<{ text: string; href: string; target: string; rel: string }[]>(
    `[...document.querySelectorAll('.app-links a')].map((a) => ({
      text: a.firstChild.textContent.trim(), href: a.getAttribute('href'),
      target: a.getAttribute('target'), rel: a.getAttribute('rel') }))`,
  )
}

function expectAbout(links: Awaited<ReturnType<typeof aboutLinks>>) {
  expect(links).toEqual(
    Object.entries(LINKS).map(([text, href]) => ({
      text,
      href,
      target: '_blank',
      rel: 'noopener noreferrer',
    })),
  )
}

describe.skipIf(!BROWSER_AVAILABLE)('application metadata on the consent and connected-apps pages', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  for (const colorScheme of ['light', 'dark'] as const) {
    it(
      `shows the description as text and the links in a new tab; accessible, keyboard-reachable (${colorScheme})`,
      async () => {
        const s = await seedBrowserWorld(world, 'Link Printer')
        const patched = await world.t.services.clients.updateClient(s.client.id, {
          description: DESCRIPTION,
          homepage_url: LINKS.Website,
          privacy_policy_url: LINKS['Privacy policy'],
          terms_url: LINKS['Terms of service'],
        })
        expect(patched.client.metadata.description).toBe(DESCRIPTION)
        const { context, page } = await newPage(world.browser, { colorScheme })

        await page.goto(s.authorizeUrl(`state-meta-${colorScheme}`))
        await signIn(page, s)
        await page.getByRole('button', { name: 'Allow' }).waitFor()
        // Plain text: the markup in it is shown, never rendered.
        expect(await page.locator('.app-description').textContent()).toBe(DESCRIPTION)
        expect(await page.locator('.app-description b').count()).toBe(0)
        expectAbout(await aboutLinks(page))
        expect(
          await page
            .getByRole('link', { name: 'Privacy policy of Link Printer (opens in a new tab)' })
            .count(),
        ).toBe(1)
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, `app-metadata-${colorScheme}-consent`)

        // The keyboard reaches the links before the decision, and Allow after them.
        await page.locator('body').focus()
        const order: string[] = []
        for (let i = 0; i < 6; i++) {
          await page.keyboard.press('Tab')
          order.push(await page.evaluate<string>('(document.activeElement.textContent || "").trim()'))
        }
        expect(order.slice(0, 4)).toEqual([
          'Website of Link Printer: printer.example (opens in a new tab)',
          'Privacy policy of Link Printer (opens in a new tab)',
          'Terms of service of Link Printer (opens in a new tab)',
          'Allow',
        ])

        // Following a link opens a new tab and leaves the consent page where it was.
        await context.route('https://printer.example/**', (route) =>
          route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Printer</title>' }),
        )
        const [tab] = await Promise.all([
          context.waitForEvent('page'),
          page.getByRole('link', { name: /^Website/ }).click(),
        ])
        await tab.waitForLoadState()
        expect(tab.url()).toBe(LINKS.Website)
        expect(await tab.evaluate<boolean>('window.opener === null')).toBe(true)
        await tab.close()

        await page.getByRole('button', { name: 'Allow' }).click()
        await waitForCallback(page, world)

        await page.goto(`${world.base}/account/apps`)
        await page.getByRole('heading', { name: 'Link Printer' }).waitFor()
        expect(await page.locator('.connected-app .app-description').textContent()).toBe(DESCRIPTION)
        expectAbout(await aboutLinks(page))
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, `app-metadata-${colorScheme}-connected-apps`)
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )
  }

  it(
    'fits a phone screen with a long description and links',
    async () => {
      const s = await seedBrowserWorld(world, 'A Rather Long Application Name For Phones')
      await world.t.services.clients.updateClient(s.client.id, {
        description: 'Averyveryverylongwordwithoutanyspaceatallthatmustwrapsomewhere '.repeat(4).trim(),
        homepage_url: `https://printer.example/${'a'.repeat(200)}`,
      })
      const { context, page } = await newPage(world.browser, { viewport: { width: 360, height: 740 } })
      await page.goto(s.authorizeUrl('state-meta-phone'))
      await signIn(page, s)
      await page.getByRole('button', { name: 'Allow' }).waitFor()
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'app-metadata-phone-consent')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
