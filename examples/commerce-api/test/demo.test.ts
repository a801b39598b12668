import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { freePort } from '../../../test/helpers/net.js'
import { killStartedServers, startDemo, waitForOutput } from '../../../test/helpers/server-process.js'

/**
 * `npm run commerce-api:demo` against an authorization server that is already running: it registers
 * the commerce API, starts it, runs the flow with a person (played here over real HTTP), and as the
 * shop syncs a catalogue, makes a link, clicks it, reports a conversion and prints the statistics.
 */
let t: TestApp
let issuer: string
let adminUrl: string
let dataDir: string
beforeAll(async () => {
  const served = await listenTestApp({}, { admin: true })
  ;({ t, issuer } = served)
  adminUrl = served.adminUrl as string
  dataDir = mkdtempSync(join(tmpdir(), 'commerce-demo-'))
})
afterAll(async () => {
  killStartedServers()
  await t?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

it('starts the commerce API beside the server and walks a shop through sync, link, click, conversion, stats', async () => {
  const commercePort = await freePort()
  const callbackPort = await freePort()
  const demo = startDemo(
    'examples/commerce-api/demo.ts',
    { issuer, adminUrl, dataDir },
    {
      COMMERCE_PORT: String(commercePort),
      COMMERCE_PUBLIC_URL: `http://127.0.0.1:${commercePort}`,
      ...(t.database.url
        ? { COMMERCE_DATABASE_URL: t.database.url }
        : { COMMERCE_DATA_DIR: join(dataDir, 'commerce') }),
      DEMO_PORT: String(callbackPort),
    },
  )
  const waitFor = (pattern: RegExp) => waitForOutput(demo, pattern)
  const authorize = new URL((await waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!)
  expect(authorize.searchParams.get('scope')).toBe('ecommerce:write products:sync')
  expect(authorize.searchParams.get('resource')).toBe(`http://127.0.0.1:${commercePort}/api`)
  const email = (await waitFor(/Email: +(\S+)/))[1]!
  const password = (await waitFor(/Password: +(\S+)/))[1]!
  expect(demo.output()).toMatch(/Registered the commerce API as resource server rs_\S+ \(credentials kept in/)
  expect(statSync(join(dataDir, 'commerce-api-resource-server.json')).mode & 0o777).toBe(0o600)

  const browser = new HttpBrowser(issuer)
  const callback = await browser.signInAndAllow(authorize.pathname + authorize.search, email, password)
  expect((await fetch(callback)).status).toBe(200)

  await waitFor(/6\. POST \S+\/api\/products\/batch \(3 products\) → 200 \{"received":3,"created":3/)
  await waitFor(/7\. POST \S+\/api\/links → 201/)
  await waitFor(
    /Location: https:\/\/shop\.example\/p\/sku-1001\?utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale&lclid=[\w-]{22}/,
  )
  await waitFor(/9\. POST \S+\/api\/conversions .* → 201/)
  await waitFor(/clicks 1, conversions 1, conversion rate 1/)
  await waitFor(/"value_minor": "5990"/)
  await waitFor(/Done\. Both services keep running until Ctrl-C\./)
  // The token itself is never printed.
  expect(demo.output()).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/)
  expect(statSync(join(dataDir, 'commerce-api-demo-token')).mode & 0o777).toBe(0o600)
  expect((await fetch(`http://127.0.0.1:${commercePort}/healthz`)).status).toBe(200)

  demo.child.kill('SIGINT')
  await demo.exited
  await expect
    .poll(() =>
      fetch(`http://127.0.0.1:${commercePort}/healthz`).then(
        () => 'up',
        () => 'down',
      ),
    )
    .toBe('down')
}, 90_000)
