import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoHorizontalScroll,
  newPage,
  screenshot,
  seedBrowserWorld,
  startWorld,
  waitForCallback,
} from '../helpers/playwright.js'
import type { Page } from 'playwright-core'

/** What has the keyboard focus: its tag, its accessible label or text, and whether it shows a ring. */
async function focused(page: Page) {
  return page.evaluate<{ tag: string; name: string; outline: string }>(`(() => {
    const el = document.activeElement
    const label = el.labels && el.labels[0] ? el.labels[0].textContent : el.textContent
    return { tag: el.tagName.toLowerCase(), name: (label || '').trim(), outline: getComputedStyle(el).outlineStyle }
  })()`)
}

/** Presses Tab until the element named `name` has the focus (at most `max` times). */
async function tabTo(page: Page, name: string, max = 10) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    const now = await focused(page)
    if (now.name === name) return now
  }
  throw new Error(`Tab never reached "${name}"`)
}

describe.skipIf(!BROWSER_AVAILABLE)('keyboard and phone', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  it(
    'signs in and allows with the keyboard alone (Tab and Enter, no clicks), with a visible focus ring',
    async () => {
      const s = await seedBrowserWorld(world)
      const { context, page } = await newPage(world.browser)
      await page.goto(s.authorizeUrl('state-keyboard'))
      await page.getByLabel('Email').waitFor()

      // The first Tab lands in the form: nothing focusable hides before it.
      await page.keyboard.press('Tab')
      expect(await focused(page)).toMatchObject({ tag: 'input', name: 'Email' })
      await page.keyboard.type(s.email)
      await page.keyboard.press('Tab')
      expect(await focused(page)).toMatchObject({ tag: 'input', name: 'Password' })
      await page.keyboard.type(s.password)
      const button = await tabTo(page, 'Sign in')
      expect(button.tag).toBe('button')
      expect(button.outline).not.toBe('none')
      await screenshot(page, 'keyboard-1-sign-in-focus')
      await page.keyboard.press('Enter')

      await page.getByRole('button', { name: 'Allow' }).waitFor()
      const allow = await tabTo(page, 'Allow')
      expect(allow.outline).not.toBe('none')
      await screenshot(page, 'keyboard-2-allow-focus')
      await page.keyboard.press('Enter')

      const params = await waitForCallback(page, world)
      expect(params.get('code')).toBeTruthy()
      expect(params.get('state')).toBe('state-keyboard')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'fits a phone (375×667): sign-in, consent and an error page scroll only vertically',
    async () => {
      const s = await seedBrowserWorld(world, 'A Rather Long Application Name For Small Screens')
      const { context, page } = await newPage(world.browser, {
        viewport: { width: 375, height: 667 },
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
      })
      await page.goto(s.authorizeUrl('state-phone', 'links:read links:write ecommerce:write products:sync'))
      await page.getByLabel('Email').waitFor()
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'phone-1-sign-in')
      await page.getByLabel('Email').fill(s.email)
      await page.getByLabel('Password').fill(s.password)
      await page.getByRole('button', { name: 'Sign in' }).tap()

      await page.getByRole('button', { name: 'Allow' }).waitFor()
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'phone-2-consent')
      await page.getByRole('button', { name: 'Allow' }).tap()
      expect((await waitForCallback(page, world)).get('code')).toBeTruthy()

      await page.goto(
        `${world.base}/oauth/authorize?client_id=unknown&redirect_uri=https%3A%2F%2Fx.example%2Fcb`,
      )
      await page.getByRole('heading', { level: 1 }).waitFor()
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'phone-3-error')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
