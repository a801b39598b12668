import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../helpers/app.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  launchBrowser,
  newPage,
  RESULTS_DIR,
  screenshot,
  STEP_TIMEOUT,
} from '../helpers/playwright.js'
import type { Browser } from 'playwright-core'

/** `npm run demo` (scripts/demo.ts) against a running server, with a person's part played in chromium. */
describe.skipIf(!BROWSER_AVAILABLE)('npm run demo', () => {
  let t: TestApp
  let browser: Browser
  let publicUrl: string
  let adminUrl: string
  const children: ChildProcess[] = []
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
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    await browser?.close()
    await t?.close()
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
  })

  function runDemo() {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LINKAUTH_URL: publicUrl,
        LINKAUTH_ADMIN_URL: adminUrl,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        // Each run a registration of its own (the demo reuses the one kept in DATA_DIR).
        DATA_DIR: dataDir(),
        DEMO_TIMEOUT: '90',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let output = ''
    child.stdout?.on('data', (d) => (output += d))
    child.stderr?.on('data', (d) => (output += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    const waitFor = async (pattern: RegExp) => {
      await expect.poll(() => pattern.test(output), { timeout: STEP_TIMEOUT * 2, interval: 100 }).toBe(true)
      return pattern.exec(output)!
    }
    return { output: () => output, exited, waitFor }
  }

  it(
    'registers an app and a user, prints the authorize URL, and after Allow prints the token response',
    async () => {
      const demo = runDemo()
      const url = (await demo.waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!
      const email = (await demo.waitFor(/Email: +(\S+)/))[1]!
      const password = (await demo.waitFor(/Password: +(\S+)/))[1]!

      const { context, page } = await newPage(browser)
      await page.goto(url)
      await expect.poll(() => page.getByText('linkauth demo').first().isVisible()).toBe(true)
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
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
      const url = (await demo.waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!
      const email = (await demo.waitFor(/Email: +(\S+)/))[1]!
      const password = (await demo.waitFor(/Password: +(\S+)/))[1]!
      const { context, page } = await newPage(browser)
      await page.goto(url)
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('button', { name: 'Deny' }).click()
      await page.getByRole('heading', { name: 'The demo app received an error' }).waitFor()
      await context.close()
      expect(await demo.exited).toBe(1)
      expect(demo.output()).toContain('error=access_denied')
    },
    BROWSER_TEST_TIMEOUT,
  )
})
