import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  newPage,
  screenshot,
  seedBrowserWorld,
  signIn,
  signInAndAllow,
  startWorld,
  waitForCallback,
} from '../helpers/playwright.js'

/** The authorization flow as a person sees it in chromium: labels and button names, nothing else. */
describe.skipIf(!BROWSER_AVAILABLE)('the flow in a browser', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  it(
    'signs in, allows, and the app’s callback receives code, state and iss',
    async () => {
      const s = await seedBrowserWorld(world)
      const { context, page } = await newPage(world.browser)
      await page.goto(s.authorizeUrl('state-allow-1'))

      await expect.poll(() => page.title()).toBe('Sign in · linkauth')
      await expect.poll(() => page.getByText('Shortcut Stats').first().isVisible()).toBe(true)
      await screenshot(page, 'flow-1-sign-in')
      await signIn(page, s)

      await page.getByRole('heading', { name: /Shortcut Stats wants to use your account/ }).waitFor()
      const scopes = await page.getByRole('listitem').allTextContents()
      expect(scopes.join('\n')).toMatch(/Read your short links/)
      expect(scopes.join('\n')).toMatch(/Create, modify and delete your short links/)
      await screenshot(page, 'flow-2-consent')
      await page.getByRole('button', { name: 'Allow' }).click()

      const params = await waitForCallback(page, world)
      expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/)
      expect(params.get('state')).toBe('state-allow-1')
      expect(params.get('iss')).toBe(world.t.config.issuer)
      expect(params.get('error')).toBeNull()
      await screenshot(page, 'flow-3-callback')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'Deny sends the person back with error=access_denied',
    async () => {
      const s = await seedBrowserWorld(world)
      const { context, page } = await newPage(world.browser)
      await page.goto(s.authorizeUrl('state-deny'))
      await signIn(page, s)
      await page.getByRole('button', { name: 'Deny' }).click()

      const params = await waitForCallback(page, world)
      expect(params.get('error')).toBe('access_denied')
      expect(params.get('state')).toBe('state-deny')
      expect(params.get('iss')).toBe(world.t.config.issuer)
      expect(params.get('code')).toBeNull()
      await screenshot(page, 'flow-deny-callback')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'a wrong password shows an error and keeps the email; the right one goes on',
    async () => {
      const s = await seedBrowserWorld(world)
      const { context, page } = await newPage(world.browser)
      await page.goto(s.authorizeUrl('state-retry'))
      await signIn(page, { email: s.email, password: 'not the password' })

      await page.getByRole('alert').waitFor()
      expect(await page.getByRole('alert').textContent()).toContain('Email or password is incorrect')
      expect(await page.getByLabel('Email').inputValue()).toBe(s.email)
      expect(await page.getByLabel('Password').inputValue()).toBe('')
      await screenshot(page, 'flow-wrong-password')

      await page.getByLabel('Password').fill(s.password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('button', { name: 'Allow' }).click()
      const params = await waitForCallback(page, world)
      expect(params.get('code')).toBeTruthy()
      expect(params.get('state')).toBe('state-retry')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'on return with the same scopes, one click (a loopback redirect URI, RFC 8252 §8.6) and the callback gets a code',
    async () => {
      const s = await seedBrowserWorld(world)
      const { context, page } = await newPage(world.browser)
      await signInAndAllow(page, world, s, 'state-first')

      const before = world.callback.received.length
      await page.goto(s.authorizeUrl('state-again'))
      // The callback is a loopback URI, which any program could claim: a confirmation, not a silent code.
      await page.getByRole('heading', { name: /^Continue to/ }).waitFor()
      expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(0)
      await page.getByRole('button', { name: 'Continue' }).click()
      await page.waitForURL((url) => new URL(url).searchParams.get('state') === 'state-again')
      expect(page.url().startsWith(world.callback.redirectUri)).toBe(true)
      const params = new URL(page.url()).searchParams
      expect(params.get('code')).toBeTruthy()
      expect(params.get('iss')).toBe(world.t.config.issuer)
      expect(world.callback.received.length).toBe(before + 1)
      await screenshot(page, 'flow-consent-skipped')
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
