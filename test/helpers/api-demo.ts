import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { listenTestApp, type TestApp } from './app.js'
import { HttpBrowser } from './http-browser.js'
import { freePort } from './net.js'
import { killStartedServers, type ServerProcess, startDemo, waitForOutput } from './server-process.js'

/**
 * The demo of an example API (`examples/<dir>/demo.ts`) against an authorization server that is
 * already running, as its test drives it. Registers beforeAll/afterAll: the server (with its admin
 * API) and a data folder of the test's own.
 */
export function apiDemoTest(api: { dir: 'links-api' | 'commerce-api'; prefix: 'LINKS' | 'COMMERCE' }) {
  let t: TestApp
  let issuer: string
  let adminUrl: string
  let dataDir: string
  beforeAll(async () => {
    const served = await listenTestApp({}, { admin: true })
    ;({ t, issuer } = served)
    adminUrl = served.adminUrl as string
    dataDir = mkdtempSync(join(tmpdir(), `${api.dir}-demo-`))
  })
  afterAll(async () => {
    killStartedServers()
    await t?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const healthz = (port: number) =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      (res) => res.status,
      () => 'down' as const,
    )

  return {
    get dataDir() {
      return dataDir
    },
    /**
     * Starts the demo (the API on a free port, on the test database or a PGlite folder) and reads the
     * authorize URL and the demo user it prints; `consent()` then plays the person in a browser:
     * sign in, Allow, the browser lands on the demo's callback.
     */
    async start() {
      const port = await freePort()
      const callbackPort = await freePort()
      const demo: ServerProcess = startDemo(
        `examples/${api.dir}/demo.ts`,
        { issuer, adminUrl, dataDir },
        {
          [`${api.prefix}_PORT`]: String(port),
          [`${api.prefix}_PUBLIC_URL`]: `http://127.0.0.1:${port}`,
          ...(t.database.url
            ? { [`${api.prefix}_DATABASE_URL`]: t.database.url }
            : { [`${api.prefix}_DATA_DIR`]: join(dataDir, api.dir) }),
          DEMO_PORT: String(callbackPort),
        },
      )
      const waitFor = (pattern: RegExp) => waitForOutput(demo, pattern)
      const authorize = new URL((await waitFor(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m))[1]!)
      const email = (await waitFor(/Email: +(\S+)/))[1]!
      const password = (await waitFor(/Password: +(\S+)/))[1]!
      return {
        demo,
        waitFor,
        port,
        callbackPort,
        authorize,
        async consent(): Promise<HttpBrowser> {
          const browser = new HttpBrowser(issuer)
          const callback = await browser.signInAndAllow(
            authorize.pathname + authorize.search,
            email,
            password,
          )
          expect((await fetch(callback)).status).toBe(200)
          return browser
        },
        /** The token was never printed, and its file is the user's alone. */
        expectTokenKeptSecret(): void {
          expect(demo.output()).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/)
          expect(statSync(join(dataDir, `${api.dir}-demo-token`)).mode & 0o777).toBe(0o600)
        },
        /** Ctrl-C: the demo stops, and the API it started with it. */
        async interruptAndExpectStopped(): Promise<void> {
          expect(await healthz(port)).toBe(200)
          demo.child.kill('SIGINT')
          await demo.exited
          await expect.poll(async () => ((await healthz(port)) === 'down' ? 'down' : 'up')).toBe('down')
        },
      }
    },
  }
}
