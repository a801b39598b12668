import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENEROUS_LIMITS, listenTestApp, type TestApp } from '../helpers/app.js'
import { PASSWORD } from '../helpers/browser.js'
import { BROWSER_AVAILABLE } from '../helpers/chromium.js'
import {
  BROWSER_TEST_TIMEOUT,
  launchBrowser,
  newPage,
  screenshot,
  signIn,
  STEP_TIMEOUT,
} from '../helpers/playwright.js'
import { introspect } from '../helpers/tokens.js'

/**
 * A browser-only application (SPA) on another origin than the server does the whole flow with
 * fetch in chromium: discovery, PKCE, authorize → sign in → consent → back to its page, then code
 * exchange (a form POST: no preflight), refresh (JSON: preflighted), revocation (HTTP Basic with an
 * empty password: preflighted), all read through CORS. A page on an origin no client registered
 * may read the public documents, never the token endpoint's answers.
 */

/** The application's script: plain browser JavaScript, as an SPA would ship it. */
const APP_SCRIPT = String.raw`
const { issuer, clientId } = JSON.parse(document.getElementById('config').textContent)
const redirectUri = location.origin + '/callback'
const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const show = (result) => { document.getElementById('result').textContent = JSON.stringify(result) }
const answer = async (res) => ({ status: res.status, body: await res.json(), wwwAuthenticate: res.headers.get('www-authenticate') })

async function start() {
  const metadata = await (await fetch(issuer + '/.well-known/oauth-authorization-server')).json()
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)))
  const state = b64url(crypto.getRandomValues(new Uint8Array(16)))
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
  sessionStorage.setItem('pending', JSON.stringify({ verifier, state, metadata }))
  const url = new URL(metadata.authorization_endpoint)
  url.search = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri,
    scope: 'links:read links:write', state, code_challenge: challenge, code_challenge_method: 'S256',
  })
  location.assign(url)
}

async function callback() {
  const { verifier, state, metadata } = JSON.parse(sessionStorage.getItem('pending'))
  const params = new URLSearchParams(location.search)
  if (params.get('state') !== state || params.get('iss') !== metadata.issuer) return show({ error: 'state or iss' })
  const exchange = await answer(await fetch(metadata.token_endpoint, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: params.get('code'), code_verifier: verifier,
      client_id: clientId, redirect_uri: redirectUri,
    }),
  }))
  const refreshBody = (token) => JSON.stringify({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId })
  const refresh = await answer(await fetch(metadata.token_endpoint, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: refreshBody(exchange.body.refresh_token),
  }))
  const revoke = await answer(await fetch(metadata.revocation_endpoint, {
    method: 'POST',
    headers: { authorization: 'Basic ' + btoa(clientId + ':') },
    body: new URLSearchParams({ token: refresh.body.refresh_token, token_type_hint: 'refresh_token' }),
  }))
  const afterRevoke = await answer(await fetch(metadata.token_endpoint, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: refreshBody(refresh.body.refresh_token),
  }))
  const jwks = await (await fetch(metadata.jwks_uri)).json()
  show({ exchange, refresh, revoke, afterRevoke, jwksKeys: jwks.keys.length })
}

async function probe() {
  const metadata = await (await fetch(issuer + '/.well-known/oauth-authorization-server')).json()
  const token = await fetch(metadata.token_endpoint, {
    method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId }),
  }).then((res) => 'read ' + res.status, (err) => 'blocked: ' + err.name)
  show({ metadataIssuer: metadata.issuer, token })
}

({ '/': start, '/callback': callback, '/probe': probe })[location.pathname]().catch((err) => show({ error: String(err) }))
`

/** The application's web server: one page, its script, and its config (issuer and client_id). */
async function startAppServer(config: () => { issuer: string; clientId: string }) {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://app').pathname
    if (path === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(APP_SCRIPT)
      return
    }
    if (!['/', '/callback', '/probe'].includes(path)) {
      res.writeHead(404).end()
      return
    }
    const json = JSON.stringify(config()).replace(/</g, '\\u003c')
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><html lang="en"><title>Browser app</title><h1>Browser app</h1>` +
          `<script type="application/json" id="config">${json}</script>` +
          `<pre id="result"></pre><script type="module" src="/app.js"></script></html>`,
      )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe.skipIf(!BROWSER_AVAILABLE)('a single-page application on another origin', () => {
  let t: TestApp
  let issuer: string
  let browser: Browser
  let appServer: Awaited<ReturnType<typeof startAppServer>>
  let clientId = ''
  beforeAll(async () => {
    ;({ t, issuer } = await listenTestApp({ env: GENEROUS_LIMITS }))
    appServer = await startAppServer(() => ({ issuer, clientId }))
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await appServer?.close()
    await t?.close()
  })

  it(
    'authorizes, signs in, consents, exchanges the code with PKCE, refreshes and revokes with fetch',
    async () => {
      // The app is served on localhost; the server on 127.0.0.1: two origins.
      const appOrigin = `http://localhost:${appServer.port}`
      const client = await t.services.clients.createClient({
        name: 'Browser App',
        redirect_uris: [`${appOrigin}/callback`],
      })
      clientId = client.id
      const email = `spa-${Math.random().toString(36).slice(2, 10)}@example.com`
      await t.services.users.createUser({ email, password: PASSWORD })

      const { context, page } = await newPage(browser)
      await page.goto(`${appOrigin}/`)
      await page.waitForURL((url) => url.href.startsWith(`${issuer}/login`))
      await signIn(page, { email, password: PASSWORD })
      await page.getByRole('button', { name: 'Allow' }).click()
      await page.waitForURL((url) => url.href.startsWith(`${appOrigin}/callback`))
      await page.locator('#result').filter({ hasText: /\S/ }).waitFor({ timeout: STEP_TIMEOUT })
      const result = JSON.parse((await page.locator('#result').textContent())!)
      await screenshot(page, 'spa-callback')

      expect(result.exchange).toMatchObject({
        status: 200,
        body: { token_type: 'Bearer', scope: 'links:read links:write', expires_in: 600 },
      })
      expect(result.refresh.status).toBe(200)
      expect(result.refresh.body.refresh_token).not.toBe(result.exchange.body.refresh_token)
      expect(result.revoke).toMatchObject({ status: 200, body: {} })
      // The error is readable too (CORS on error answers): the app knows to start again.
      expect(result.afterRevoke).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
      expect(result.jwksKeys).toBeGreaterThan(0)
      // The server agrees: the family is revoked.
      const rs = await t.services.resourceServers.createResourceServer({ name: 'Links API' })
      expect(await introspect(t, rs, result.refresh.body.access_token)).toEqual({ active: false })
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )

  it(
    'a page on an origin no client registered reads the metadata, but not the token endpoint',
    async () => {
      const { context, page } = await newPage(browser)
      await page.goto(`http://127.0.0.1:${appServer.port}/probe`)
      await page.locator('#result').filter({ hasText: /\S/ }).waitFor({ timeout: STEP_TIMEOUT })
      const result = JSON.parse((await page.locator('#result').textContent())!)
      expect(result).toEqual({ metadataIssuer: issuer, token: 'blocked: TypeError' })
      await context.close()
    },
    BROWSER_TEST_TIMEOUT,
  )
})
