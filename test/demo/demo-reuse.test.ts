import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, listenTestApp, type TestApp } from '../helpers/app.js'
import { freePort } from '../helpers/net.js'
import { killStartedServers, startDemo, waitForOutput } from '../helpers/server-process.js'

/**
 * `npm run demo` run again and again against one server: the application and user of the first
 * run are reused (kept in DATA_DIR), not registered anew each time.
 */
let t: TestApp
let issuer: string
let adminUrl: string
let dataDir: string
let blocker: Server | undefined
beforeAll(async () => {
  const served = await listenTestApp({}, { admin: true })
  ;({ t, issuer } = served)
  adminUrl = served.adminUrl as string
  dataDir = mkdtempSync(join(tmpdir(), 'linkauth-demo-reuse-'))
})
afterAll(async () => {
  killStartedServers()
  blocker?.close()
  await t?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Runs the demo until it prints the authorize URL, then stops it (the person never comes). */
async function runUntilAuthorizeUrl(extraEnv: Record<string, string> = {}) {
  const demo = startDemo('scripts/demo.ts', { issuer, adminUrl, dataDir }, extraEnv)
  await waitForOutput(demo, /\/oauth\/authorize\?/, 60_000)
  demo.child.kill('SIGTERM')
  await demo.exited
  const output = demo.output()
  const field = (label: string) => new RegExp(`${label}: +(\\S+)`).exec(output)?.[1]
  return {
    output,
    clientId: field('client_id'),
    redirectUri: field('redirect_uri'),
    email: field('Email'),
    authorizeUrl: new URL(/^ {3}(http:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(output)![1]!),
  }
}

async function demoClients() {
  const res = await t.admin.inject({ method: 'GET', url: '/admin/clients', headers: adminHeaders })
  return (res.json() as { clients: { client_id: string; name: string; disabled_at: string | null }[] })
    .clients
}

async function userCount() {
  const res = await t.admin.inject({ method: 'GET', url: '/admin/users', headers: adminHeaders })
  return (res.json() as { users: unknown[] }).users.length
}

describe('npm run demo, run again', () => {
  it('reuses the application and the user of the first run', async () => {
    const first = await runUntilAuthorizeUrl()
    expect(first.output).toMatch(/1\. Registered the application "linkauth demo"/)
    expect(statSync(join(dataDir, 'linkauth-demo.json')).mode & 0o777).toBe(0o600)
    // The consent page always shows (the person may choose Deny), although consent is remembered.
    expect(first.authorizeUrl.searchParams.get('prompt')).toBe('consent')

    const second = await runUntilAuthorizeUrl()
    expect(second.output).toMatch(/1\. Using the application "linkauth demo" an earlier run registered/)
    expect(second.output).toContain('2. The demo user to sign in with (from an earlier run)')
    expect([second.clientId, second.redirectUri, second.email]).toEqual([
      first.clientId,
      first.redirectUri,
      first.email,
    ])
    expect((await demoClients()).filter((c) => c.name === 'linkauth demo')).toHaveLength(1)
    expect(await userCount()).toBe(1)
  }, 120_000)

  it('gives way to a new application when the kept callback port is taken, leaving one enabled', async () => {
    const before = await runUntilAuthorizeUrl()
    blocker = createServer()
    await new Promise<void>((resolve) =>
      blocker!.listen(Number(new URL(before.redirectUri!).port), '127.0.0.1', resolve),
    )
    const after = await runUntilAuthorizeUrl()
    expect(after.clientId).not.toBe(before.clientId)
    expect(after.email).toBe(before.email)
    const live = (await demoClients()).filter((c) => c.name === 'linkauth demo' && c.disabled_at === null)
    expect(live.map((c) => c.client_id)).toEqual([after.clientId])
    expect(await userCount()).toBe(1)
  }, 120_000)

  it('listens on DEMO_PORT when it is given', async () => {
    const port = await freePort()
    const run = await runUntilAuthorizeUrl({ DEMO_PORT: String(port) })
    expect(run.redirectUri).toBe(`http://127.0.0.1:${port}/callback`)
  }, 120_000)
})
