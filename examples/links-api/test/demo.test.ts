import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { hiddenField } from '../../../test/helpers/browser.js'
import { HttpBrowser } from '../../../test/helpers/http-browser.js'
import { freePort } from '../../../test/helpers/net.js'
import { killStartedServers, startDemo, waitForOutput } from '../../../test/helpers/server-process.js'

/**
 * `npm run links-api:demo` against an authorization server that is already running (so the demo
 * uses it rather than starting dist/): it registers the links API, starts it, runs the flow with a
 * person (played here over real HTTP), uses the token, and sees it refused after the revocation.
 */
let t: TestApp
let issuer: string
let adminUrl: string
let dataDir: string
beforeAll(async () => {
  const served = await listenTestApp({}, { admin: true })
  ;({ t, issuer } = served)
  adminUrl = served.adminUrl as string
  dataDir = mkdtempSync(join(tmpdir(), 'links-demo-'))
})
afterAll(async () => {
  killStartedServers()
  await t?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

it('starts the links API beside the server, uses a token on it, and sees the revocation', async () => {
  const linksPort = await freePort()
  const callbackPort = await freePort()
  const demo = startDemo(
    'examples/links-api/demo.ts',
    { issuer, adminUrl, dataDir },
    {
      LINKS_PORT: String(linksPort),
      LINKS_PUBLIC_URL: `http://127.0.0.1:${linksPort}`,
      ...(t.database.url
        ? { LINKS_DATABASE_URL: t.database.url }
        : { LINKS_DATA_DIR: join(dataDir, 'links') }),
      DEMO_PORT: String(callbackPort),
    },
  )
  const waitFor = (pattern: RegExp) => waitForOutput(demo, pattern)
  const authorize = new URL((await waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!)
  expect(authorize.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${callbackPort}/callback`)
  const email = (await waitFor(/Email: +(\S+)/))[1]!
  const password = (await waitFor(/Password: +(\S+)/))[1]!
  expect(demo.output()).toContain('Using the authorization server already running at')
  expect(demo.output()).toMatch(/Registered the links API as resource server rs_\S+ \(credentials kept in/)
  expect(statSync(join(dataDir, 'links-api-resource-server.json')).mode & 0o777).toBe(0o600)

  // The person: sign in, Allow; the browser lands on the demo's callback.
  const browser = new HttpBrowser(issuer)
  const callback = await browser.signInAndAllow(authorize.pathname + authorize.search, email, password)
  expect((await fetch(callback)).status).toBe(200)

  await waitFor(/6\. POST \S+\/api\/links → 201/)
  await waitFor(/7\. GET \S+ → 302, Location: https:\/\/example\.com\//)
  await waitFor(/8\. GET \S+\/stats → total_clicks 1/)
  await waitFor(/9\. Now revoke "links API demo"/)
  // It watches as often as its README says.
  const interval = (await waitFor(/with the token, every (\d+) ms/))[1]!
  expect(readFileSync('examples/links-api/README.md', 'utf8')).toContain(`every ${interval} ms`)
  // The token itself is never printed.
  expect(demo.output()).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/)
  expect(statSync(join(dataDir, 'links-api-demo-token')).mode & 0o777).toBe(0o600)

  // The person revokes the demo application on the connected-apps page.
  const apps = await browser.request('/account/apps')
  const clientId = /\/account\/apps\/([\w-]+)\/revoke/.exec(apps.body)![1]!
  const revoked = await browser.request(`/account/apps/${clientId}/revoke`, {
    method: 'POST',
    form: { csrf_token: hiddenField(apps.body, 'csrf_token') },
  })
  expect(revoked.res.status).toBe(303)
  await waitFor(/→ 401 invalid_token: the links API refused the token/)
  // How soon, as its README says: from linkauth's revocation (its introspection) to the links API's refusal.
  const after = Number((await waitFor(/(\d+) ms after linkauth revoked it/))[1])
  expect(after).toBeLessThan(5_000)
  await waitFor(/Done\. Both services keep running until Ctrl-C\./)
  expect((await fetch(`http://127.0.0.1:${linksPort}/healthz`)).status).toBe(200)

  demo.child.kill('SIGINT')
  await demo.exited
  await expect
    .poll(() =>
      fetch(`http://127.0.0.1:${linksPort}/healthz`).then(
        () => 'up',
        () => 'down',
      ),
    )
    .toBe('down')
}, 90_000)
