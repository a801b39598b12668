import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../helpers/app.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  launchBrowser,
  newPage,
  RESULTS_DIR,
  screenshot,
  signIn,
  STEP_TIMEOUT,
} from '../helpers/playwright.js'
import type { Browser } from 'playwright-core'
import { killStartedServers, startDemo, waitForOutput } from '../helpers/server-process.js'

/** `npm run demo` (scripts/demo.ts) against a running server, with a person's part played in chromium. */
describe.skipIf(!BROWSER_AVAILABLE)('npm run demo', () => {
  let t: TestApp
  let browser: Browser
  let publicUrl: string
  let adminUrl: string
  const dataDirs: string[] = []
  const dataDir = () => {
    dataDirs.push(mkdtempSync(join(tmpdir(), 'linkauth-demo-')))
    return dataDirs.at(-1)!
  }

  beforeAll(async () => {
    const served = await listenTestApp({}, { admin: true })
    ;({ t, issuer: publicUrl } = served)
    adminUrl = served.adminUrl as string
    browser = await launchBrowser()
  })
  afterAll(async () => {
    killStartedServers()
    await browser?.close()
    await t?.close()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  })

  function runDemo() {
    // Each run a registration of its own (the demo reuses the one kept in DATA_DIR).
    const demo = startDemo(
      'scripts/demo.ts',
      { issuer: publicUrl, adminUrl, dataDir: dataDir() },
      {
        DEMO_TIMEOUT: '90',
      },
    )
    const waitFor = (pattern: RegExp) => waitForOutput(demo, pattern, STEP_TIMEOUT * 2)
    return { ...demo, waitFor }
  }

  /** What the demo prints for the person: the authorize URL, and the email and password to sign in with. */
  async function demoPrompts(demo: ReturnType<typeof runDemo>) {
    const url = (await demo.waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!
    const email = (await demo.waitFor(/Email: +(\S+)/))[1]!
    const password = (await demo.waitFor(/Password: +(\S+)/))[1]!
    return { url, email, password }
  }

  it(
    'registers an app and a user, prints the authorize URL, and after Allow prints the token response',
    async () => {
      const demo = runDemo()
      const { url, email, password } = await demoPrompts(demo)

      const { context, page } = await newPage(browser)
      await page.goto(url)
      await expect.poll(() => page.getByText('linkauth demo').first().isVisible()).toBe(true)
      await signIn(page, { email, password })
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.getByRole('heading', { name: 'The demo app received a code' }).waitFor()
      await screenshot(page, 'demo-callback')
      await context.close()

      expect(await demo.exited).toBe(0)
      const output = demo.output()
      writeFileSync(join(RESULTS_DIR, 'demo-output.txt'), output)
      expect(output).toContain('"token_type": "Bearer"')
      expect(output).toContain('"scope": "links:read links:write"')
      expect(output).toMatch(/"access_token": "\S{12}… \(\d+ characters\)"/)
      expect(output).toMatch(/"refresh_token": "\S{12}… \(\d+ characters\)"/)
      // Tokens are abbreviated: no whole JWT, and no code, reaches the terminal.
      expect(output).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/)
      expect(output).not.toMatch(/code=/)
      expect(output).toContain('Done: the whole flow')
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'Deny ends the demo with access_denied and a non-zero exit',
    async () => {
      const demo = runDemo()
      const { url, email, password } = await demoPrompts(demo)
      const { context, page } = await newPage(browser)
      await page.goto(url)
      await signIn(page, { email, password })
      await page.getByRole('button', { name: 'Deny' }).click()
      await page.getByRole('heading', { name: 'The demo app received an error' }).waitFor()
      await context.close()
      expect(await demo.exited).toBe(1)
      expect(demo.output()).toContain('error=access_denied')
    },
    BROWSER_TEST_TIMEOUT,
  )
})
