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
} from '../helpers/playwright.js'

/** The password pages (issue 18) as a person uses them: the change form and a reset link's page. */

/** What has the keyboard focus: its accessible label or text. */
const focusedName = (page: Page) =>
  page.evaluate<string>(`(() => {
    const el = document.activeElement
    const label = el.labels && el.labels[0] ? el.labels[0].textContent : el.textContent
    return (label || '').trim()
  })()`)

describe.skipIf(!BROWSER_AVAILABLE)('password pages', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  it(
    'a signed-in person changes their password with the keyboard alone; a wrong current one is said plainly',
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const { context, page } = await newPage(world.browser)
      await page.goto(`${world.base}/account/password`)
      // Not signed in: the sign-in form, which comes back here.
      await signIn(page, s)
      await page.getByRole('heading', { name: 'Change your password' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/account/password')
      await expectNoSeriousA11yViolations(page)
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'password-1-change-form')

      await page.getByLabel('Current password').fill('not my password')
      await page.getByLabel('New password', { exact: true }).fill('a much better password')
      await page.getByLabel('Repeat the new password').fill('a much better password')
      await page.getByRole('button', { name: 'Change password' }).click()
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toContain('current password is not correct')
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'password-2-wrong-current')

      // Keyboard only: Tab through the fields in order, Enter submits.
      await page.goto(`${world.base}/account/password`)
      for (const [name, value] of [
        ['Current password', s.password],
        ['New password', 'a much better password'],
        ['Repeat the new password', 'a much better password'],
      ] as const) {
        for (let i = 0; i < 6 && (await focusedName(page)) !== name; i++) await page.keyboard.press('Tab')
        expect(await focusedName(page)).toBe(name)
        await page.keyboard.type(value)
      }
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Password changed' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'password-3-changed')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'a reset link opens a form that sets the password once; the link then says it no longer works',
    async () => {
      const s = await seedBrowserWorld(world, 'Shortcut Stats')
      const { url } = await world.t.services.users.issueResetLink(s.user.id)
      const link = url.replace(world.t.config.issuer, world.base)
      const { context, page } = await newPage(world.browser)
      await page.goto(link)
      await page.getByRole('heading', { name: 'Set a new password' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'reset-1-form')

      await page.getByLabel('New password', { exact: true }).fill('short')
      await page.getByLabel('Repeat the new password').fill('short')
      // The browser's own check stops a too-short password before it is sent.
      await page.getByRole('button', { name: 'Set password' }).click()
      expect(
        await page
          .getByLabel('New password', { exact: true })
          .evaluate((el) => (el as unknown as { validity: { valid: boolean } }).validity.valid),
      ).toBe(false)

      await page.getByLabel('New password', { exact: true }).fill('a fresh reset password')
      await page.getByLabel('Repeat the new password').fill('a fresh reset password')
      await page.getByRole('button', { name: 'Set password' }).click()
      await page.getByRole('heading', { name: 'Password set' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'reset-2-done')

      await page.getByRole('link', { name: 'Sign in with your new password' }).click()
      await signIn(page, { email: s.email, password: 'a fresh reset password' })
      await page.getByRole('heading', { name: 'You are signed in' }).waitFor()

      await page.goto(link)
      await page.getByRole('heading', { name: 'This link no longer works' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'reset-3-used')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
