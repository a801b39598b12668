import { mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import {
  type Browser,
  type BrowserContext,
  type CDPSession,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core'
import { expect } from 'vitest'
import { s256Challenge } from '../../src/lib/pkce.js'
import { buildTestApp, type TestApp } from './app.js'
import { PASSWORD } from './browser.js'
import { CHROMIUM_PATH } from './chromium.js'
import { freePort } from './net.js'

/** A generous timeout for each browser step: the machine has two cores shared with other suites. */
export const STEP_TIMEOUT = 30_000
export const BROWSER_TEST_TIMEOUT = 120_000

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 60_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  })
}

/** A fresh context (no cookies, no storage) with generous timeouts. */
export async function newPage(
  browser: Browser,
  options: BrowserContextOptions = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ locale: 'en-US', ...options })
  context.setDefaultTimeout(STEP_TIMEOUT)
  context.setDefaultNavigationTimeout(STEP_TIMEOUT)
  const page = await context.newPage()
  return { context, page }
}

export const RESULTS_DIR = join(process.cwd(), 'test-results')

/** A full-page screenshot under test-results/ (ignored by git), to look at after a run. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true })
  const path = join(RESULTS_DIR, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** The app's side of the redirect: a tiny page on another loopback port that records each callback. */
export interface CallbackServer {
  redirectUri: string
  received: URLSearchParams[]
  close(): Promise<void>
}

export async function startCallbackServer(): Promise<CallbackServer> {
  const received: URLSearchParams[] = []
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname !== '/callback') {
      res.writeHead(404).end()
      return
    }
    received.push(url.searchParams)
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><html lang="en"><title>Demo app</title><h1>Callback received</h1></html>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** The server under test over real HTTP, one callback server, and a browser. */
export interface BrowserWorld {
  t: TestApp
  base: string
  callback: CallbackServer
  browser: Browser
  close(): Promise<void>
}

/**
 * The server under test over real HTTP, a callback server and a browser. `onLocalhost`: the issuer
 * is http://localhost:PORT, a secure context on a domain name, as WebAuthn needs (else 127.0.0.1).
 */
export async function startWorld(
  options: { onLocalhost?: boolean; env?: Record<string, string> } = {},
): Promise<BrowserWorld> {
  let t: TestApp
  let base: string
  if (options.onLocalhost) {
    const port = await freePort()
    base = `http://localhost:${port}`
    t = await buildTestApp({ env: { ...options.env, ISSUER: base } })
    await t.app.listen({ port, host: 'localhost' })
  } else {
    t = await buildTestApp({ env: options.env ?? {} })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  }
  const callback = await startCallbackServer()
  const browser = await launchBrowser()
  return {
    t,
    base,
    callback,
    browser,
    close: async () => {
      await browser.close()
      await callback.close()
      await t.close()
    },
  }
}

export const DEMO_VERIFIER = 'browser-test-verifier-0123456789-abcdefghijklmnopqrstuvwxyz'

/** A registered client named `name` whose redirect_uri is the callback server, and a user. */
export async function seedBrowserWorld(world: BrowserWorld, name = 'Shortcut Stats') {
  const client = await world.t.services.clients.createClient({
    name,
    redirect_uris: [world.callback.redirectUri],
  })
  const email = `person-${Math.random().toString(36).slice(2, 10)}@example.com`
  const user = await world.t.services.users.createUser({ email, password: PASSWORD })
  const authorizeUrl = (state: string, scope = 'links:read links:write') =>
    `${world.base}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: client.id,
      redirect_uri: world.callback.redirectUri,
      scope,
      state,
      code_challenge: s256Challenge(DEMO_VERIFIER),
      code_challenge_method: 'S256',
    }).toString()}`
  return { client, user, email, password: PASSWORD, authorizeUrl }
}

/** Waits until the browser is on the callback page, and returns its query. */
export async function waitForCallback(page: Page, world: BrowserWorld): Promise<URLSearchParams> {
  await page.waitForURL((url) => url.href.startsWith(world.callback.redirectUri), { timeout: STEP_TIMEOUT })
  await expect.poll(() => world.callback.received.length, { timeout: STEP_TIMEOUT }).toBeGreaterThan(0)
  return new URL(page.url()).searchParams
}

/**
 * Fills the sign-in form on `page` and presses Sign in. `exact`: the button named exactly "Sign in"
 * (pages that also offer "Sign in with a passkey").
 */
export async function signIn(
  page: Page,
  who: { email: string; password: string },
  options: { exact?: boolean } = {},
): Promise<void> {
  await page.getByLabel('Email').fill(who.email)
  await page.getByLabel('Password').fill(who.password)
  await page.getByRole('button', { name: 'Sign in', ...(options.exact ? { exact: true } : {}) }).click()
}

/**
 * Opens the authorization request for `state`, signs in, allows, and waits for the callback: the
 * person's first consent, as most browser tests need it before the part they check.
 */
export async function signInAndAllow(
  page: Page,
  world: BrowserWorld,
  s: { email: string; password: string; authorizeUrl(state: string): string },
  state: string,
  options: { exact?: boolean } = {},
): Promise<URLSearchParams> {
  await page.goto(s.authorizeUrl(state))
  await signIn(page, s, options)
  await page.getByRole('button', { name: 'Allow' }).click()
  return waitForCallback(page, world)
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: unknown[] }[]
}

/**
 * Runs axe-core in the page. page.evaluate is not subject to the page's CSP (which rightly forbids
 * inline scripts), so the pages keep their policy while being checked.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource)
  // A string, not a function: the DOM is not in this project's type library.
  const results = await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
  return (results as { violations: AxeViolation[] }).violations
}

/** No serious or critical violation; names each one found, for a readable failure. */
export async function expectNoSeriousA11yViolations(page: Page): Promise<void> {
  const violations = await axeViolations(page)
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${JSON.stringify(v.nodes.map((n) => n.target))}`)
  expect(serious).toEqual([])
}

/** The page fits its viewport: nothing scrolls sideways. */
export async function expectNoHorizontalScroll(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  )
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth)
}

/**
 * Nothing moves once drawn: no layout shift, no web fonts, no image without a size, and nothing
 * loaded from another origin (the one stylesheet is ours).
 */
export async function expectStableLayout(page: Page): Promise<void> {
  const found = await page.evaluate<{
    shift: number
    fonts: number
    unsizedImages: number
    foreign: string[]
  }>(`new Promise((resolve) => {
    let shift = 0
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) shift += entry.value
    }).observe({ type: 'layout-shift', buffered: true })
    setTimeout(() => resolve({
      shift,
      fonts: document.fonts.size,
      unsizedImages: [...document.images].filter((i) => !i.getAttribute('width') || !i.getAttribute('height')).length,
      foreign: performance.getEntriesByType('resource').map((r) => r.name).filter((n) => !n.startsWith(location.origin)),
    }), 300)
  })`)
  expect(found).toEqual({ shift: 0, fonts: 0, unsizedImages: 0, foreign: [] })
}

/** A platform authenticator that holds passkeys and verifies the user, answering without a person. */
export const PLATFORM_AUTHENTICATOR = {
  options: {
    protocol: 'ctap2',
    transport: 'internal',
    hasResidentKey: true,
    hasUserVerification: true,
    isUserVerified: true,
    automaticPresenceSimulation: true,
  },
} as const

/** A virtual authenticator (DevTools protocol) for `page`. */
export async function virtualAuthenticator(
  context: BrowserContext,
  page: Page,
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', PLATFORM_AUTHENTICATOR)
  return { cdp, authenticatorId }
}
