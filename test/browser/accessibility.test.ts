import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  axeViolations,
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoSeriousA11yViolations,
  expectStableLayout,
  newPage,
  screenshot,
  seedBrowserWorld,
  signIn,
  startWorld,
} from '../helpers/playwright.js'

/** axe-core in the browser, on every page a person meets, in light and dark colour schemes. */
describe.skipIf(!BROWSER_AVAILABLE)('accessibility (axe-core)', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  for (const colorScheme of ['light', 'dark'] as const) {
    it(
      `sign-in, failed sign-in, consent, signed-in and error pages: no serious violation, no layout shift (${colorScheme})`,
      async () => {
        const s = await seedBrowserWorld(world)
        const { context, page } = await newPage(world.browser, { colorScheme })

        await page.goto(s.authorizeUrl('state-a11y'))
        await page.getByLabel('Email').waitFor()
        await expectNoSeriousA11yViolations(page)
        await expectStableLayout(page)
        await screenshot(page, `a11y-${colorScheme}-sign-in`)

        await signIn(page, { email: s.email, password: 'wrong password' })
        await page.getByRole('alert').waitFor()
        await expectNoSeriousA11yViolations(page)

        await page.getByLabel('Password').fill(s.password)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.getByRole('button', { name: 'Allow' }).waitFor()
        await expectNoSeriousA11yViolations(page)
        await expectStableLayout(page)
        await screenshot(page, `a11y-${colorScheme}-consent`)

        await page.goto(`${world.base}/login`)
        await page.getByRole('heading', { name: 'You are signed in' }).waitFor()
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, `a11y-${colorScheme}-signed-in`)

        const response = await page.goto(
          `${world.base}/oauth/authorize?client_id=${s.client.id}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`,
        )
        expect(response?.status()).toBe(400)
        await page.getByRole('heading', { level: 1 }).waitFor()
        await expectNoSeriousA11yViolations(page)
        await expectStableLayout(page)
        await screenshot(page, `a11y-${colorScheme}-error`)

        const missing = await page.goto(`${world.base}/no/such/page`)
        expect(missing?.status()).toBe(404)
        await expectNoSeriousA11yViolations(page)
        await screenshot(page, `a11y-${colorScheme}-not-found`)
        await context.close()
      },
      BROWSER_TEST_TIMEOUT,
    )
  }

  it(
    'the checker is not blind: a field without a label is a critical violation',
    async () => {
      const { context, page } = await newPage(world.browser)
      await page.setContent(
        '<!doctype html><html lang="en"><title>x</title><main><input type="text"></main></html>',
      )
      const ids = (await axeViolations(page)).filter((v) => v.impact === 'critical').map((v) => v.id)
      expect(ids).toContain('label')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'the pages keep their CSP while axe runs: an inline script in the page is still refused',
    async () => {
      const { context, page } = await newPage(world.browser)
      await page.goto(`${world.base}/login`)
      await expect(page.addScriptTag({ content: 'window.injected = 1' })).rejects.toThrow()
      expect(await page.evaluate('window.injected')).toBeUndefined()
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
