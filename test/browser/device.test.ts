import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  type BrowserWorld,
  expectNoHorizontalScroll,
  expectNoSeriousA11yViolations,
  newPage,
  screenshot,
  startWorld,
} from '../helpers/playwright.js'
import { PASSWORD } from '../helpers/browser.js'

/**
 * The device grant's pages (RFC 8628) as a person uses them: the user-code page from
 * verification_uri_complete, a wrong code, sign-in, the device consent with its required box.
 */
describe.skipIf(!BROWSER_AVAILABLE)('the device pages', () => {
  let world: BrowserWorld
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(async () => world?.close())

  it(
    'a person types the code, signs in, confirms they started it, and the device gets its tokens',
    async () => {
      const t = world.t
      const client = await t.services.clients.createClient({
        name: 'Links CLI',
        redirect_uris: [world.callback.redirectUri],
        grant_types: ['refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        homepage_url: 'https://cli.example/',
      })
      const email = `person-${Math.random().toString(36).slice(2, 10)}@example.com`
      await t.services.users.createUser({ email, password: PASSWORD })
      const started = await fetch(`${world.base}/api/oauth/device_authorization`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: client.id, scope: 'links:read' }),
      }).then((r) => r.json() as Promise<Record<string, string>>)

      const { context, page } = await newPage(world.browser)
      // A wrong code first: said plainly, the form stays.
      await page.goto(`${world.base}/device`)
      await page.getByLabel('Code').fill('bcdf-ghjk')
      await page.getByRole('button', { name: 'Continue' }).click()
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('not valid')
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'device-1-wrong-code')

      // verification_uri_complete fills the code in.
      await page.goto(started.verification_uri_complete!.replace(/^http:\/\/[^/]+/, world.base))
      expect(await page.getByLabel('Code').inputValue()).toBe(started.user_code)
      await expectNoSeriousA11yViolations(page)
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'device-2-code-prefilled')
      await page.getByRole('button', { name: 'Continue' }).click()

      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('heading', { name: /wants to use your account on another device/ }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await expectNoHorizontalScroll(page)
      await screenshot(page, 'device-3-consent')

      // Allow without the box: asked again.
      await page.getByRole('button', { name: 'Allow' }).click()
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Tick the box')
      await page.getByLabel('I started this sign-in myself on a device I am using now.').check()
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.getByRole('heading', { name: 'Device connected' }).waitFor()
      await expectNoSeriousA11yViolations(page)
      await screenshot(page, 'device-4-connected')
      await context.close()

      const tokens = await fetch(`${world.base}/api/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: started.device_code!,
          client_id: client.id,
        }),
      })
      expect(tokens.status).toBe(200)
    },
    BROWSER_TEST_TIMEOUT,
  )
})
