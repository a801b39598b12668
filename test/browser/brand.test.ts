import { rmSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import { writeLogos } from '../helpers/brand-logos.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoHorizontalScroll,
  expectNoSeriousA11yViolations,
  expectStableLayout,
  newPage,
  screenshot,
  seedBrowserWorld,
  signIn,
  signInAndAllow,
  startWorld,
} from '../helpers/playwright.js'

/**
 * Issue 40 §2 in a browser: the consent page of a branded server at a phone's width and a desktop's,
 * light and dark, and the account area: the logo drawn, the accent on the Allow button and the
 * links, the footer's links, axe clean, nothing shifting. Screenshots in test-results/brand-*.png
 * (docs/branding.png is the consent page at 1280 px, light).
 */
/** axe clean, nothing shifting, nothing scrolling sideways; then its screenshot. */
async function expectCleanPage(page: Page, name: string): Promise<void> {
  await expectNoSeriousA11yViolations(page)
  await expectStableLayout(page)
  await expectNoHorizontalScroll(page)
  await screenshot(page, name)
}

describe.skipIf(!BROWSER_AVAILABLE)('the operator’s brand in a browser', () => {
  const logos = writeLogos()
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld({
      env: {
        BRAND_NAME: 'Acme Accounts',
        BRAND_LOGO: logos.svg,
        BRAND_ACCENT: '#8a1c4a',
        BRAND_SUPPORT_URL: 'mailto:help@acme.example',
        BRAND_TERMS_URL: 'https://acme.example/terms',
        BRAND_PRIVACY_URL: 'https://acme.example/privacy',
      },
    })
  })
  afterAll(async () => {
    await world?.close()
    rmSync(logos.dir, { recursive: true, force: true })
  })

  const cases = [
    { width: 390, height: 844, colorScheme: 'light' },
    { width: 1280, height: 800, colorScheme: 'light' },
    { width: 390, height: 844, colorScheme: 'dark' },
  ] as const
  for (const { width, height, colorScheme } of cases) {
    it(
      `consent at ${width} px, ${colorScheme}: name, logo, accent, footer; axe clean`,
      async () => {
        const s = await seedBrowserWorld(world)
        const { context, page } = await newPage(world.browser, { viewport: { width, height }, colorScheme })
        await page.goto(s.authorizeUrl(`brand-${width}-${colorScheme}`))
        await page.getByRole('heading', { name: 'Sign in to Acme Accounts' }).waitFor()
        await signIn(page, s)
        const allow = page.getByRole('button', { name: 'Allow' })
        await allow.waitFor()
        expect(await page.title()).toBe('Allow Shortcut Stats? · Acme Accounts')

        await page.getByRole('img', { name: 'Acme Accounts' }).waitFor()
        const style = (selector: string, property: string) =>
          page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).${property}`)
        await expect
          .poll(() => page.evaluate("document.querySelector('img.brand-logo').naturalWidth"))
          .toBe(64)
        const { palette } = world.t.config.brand
        const accent = colorScheme === 'light' ? palette.light! : palette.dark!
        const rgb = (hex: string) =>
          `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`
        expect(await style('button.primary', 'backgroundColor')).toBe(rgb(accent.primary))
        expect(await style('button.primary', 'color')).toBe(rgb(accent.text))
        const footer = page.getByRole('navigation', { name: 'Help and legal' })
        const terms = footer.getByRole('link', { name: 'Terms of service' })
        expect(await terms.getAttribute('href')).toBe('https://acme.example/terms')
        // Links take the accent (a { color: var(--primary) }); the footer's, on the grey page, the text's.
        expect(
          (await page.evaluate("getComputedStyle(document.body).getPropertyValue('--primary')")) as string,
        ).toBe(accent.primary)
        expect(await style('footer.site a[href$="/terms"]', 'color')).toBe(await style('body', 'color'))
        expect(await footer.getByRole('link').allTextContents()).toEqual([
          'Contact support',
          'Terms of service',
          'Privacy policy',
        ])

        await expectCleanPage(page, `brand-consent-${width}-${colorScheme}`)
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )
  }

  for (const { width, colorScheme } of [
    { width: 1280, colorScheme: 'light' },
    { width: 390, colorScheme: 'dark' },
  ] as const) {
    it(
      `the account area at ${width} px, ${colorScheme}: branded, its footer as wide as its cards; axe clean`,
      async () => {
        const s = await seedBrowserWorld(world)
        const { context, page } = await newPage(world.browser, {
          viewport: { width, height: 844 },
          colorScheme,
        })
        await signInAndAllow(page, world, s, `brand-account-${colorScheme}`)
        await page.goto(`${world.base}/account/apps`)
        await page.getByRole('heading', { name: 'Shortcut Stats' }).waitFor()
        expect(await page.title()).toMatch(/ · Acme Accounts$/)
        await page.getByRole('img', { name: 'Acme Accounts' }).waitFor()
        const widths = await page.evaluate(
          "[document.querySelector('main').getBoundingClientRect().width, document.querySelector('footer.site').getBoundingClientRect().width]",
        )
        const [main, footer] = widths as [number, number]
        expect(footer).toBe(main)
        if (width === 1280) expect(main).toBe(640) // 40rem, the account area's
        await expectCleanPage(page, `brand-account-${width}-${colorScheme}`)
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )
  }
})
