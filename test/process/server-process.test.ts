import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createTestDatabase, testEngine } from '../helpers/database.js'
import { freePort } from '../helpers/net.js'
import {
  killStartedServers,
  startScript,
  startServer as start,
  waitForHealth,
  waitForOutput,
} from '../helpers/server-process.js'
import { runWholeFlow, spellings } from '../helpers/whole-flow.js'

/** The real entry point (src/main.ts) as a process: start-up, config errors, data kept, graceful stop. */

const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-process-'))
afterAll(() => {
  killStartedServers()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the process helper the server and demo tests share', () => {
  it('returns the line waited for, and fails with the output as soon as the process exits without it', async () => {
    const script = join(dataDir, 'prints.mjs')
    writeFileSync(script, "console.log('step 1: ready'); process.exitCode = 3")
    const running = startScript(script, {})
    expect((await waitForOutput(running, /step (\d+)/))[1]).toBe('1')
    await expect(waitForOutput(running, /step 2/, 60_000)).rejects.toThrow(/no \/step 2\/ in: step 1: ready/)
    expect(await running.exited).toBe(3)
  }, 10_000)
})

describe('the server process', () => {
  it('stops at once with one line naming a bad variable', async () => {
    const running = start({ PORT: 'abc', DATA_DIR: dataDir })
    expect(await running.exited).toBe(78)
    expect(running.output().trim()).toBe(
      'linkauth: configuration error: PORT: expected a whole number, got "abc"',
    )
  })

  it('requires the secrets on PostgreSQL in production', async () => {
    const running = start({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://x@127.0.0.1:1/x',
      DATA_DIR: dataDir,
    })
    expect(await running.exited).toBe(78)
    expect(running.output().trim()).toBe(
      'linkauth: configuration error: ADMIN_TOKEN: required when DATABASE_URL is set and NODE_ENV=production',
    )
  })

  it('runs on embedded PGlite, keeps data across a restart, and finishes in-flight requests on SIGTERM', async () => {
    const [port, adminPort] = [await freePort(), await freePort()]
    const env = { DATA_DIR: dataDir, PORT: String(port), ADMIN_PORT: String(adminPort), HOST: '127.0.0.1' }
    const first = start(env)
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, first)
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)

    // A fresh start tells a newcomer the next step: the demo, or the two CLI commands.
    for (let i = 0; i < 500 && !first.output().includes('npm run demo'); i++)
      await new Promise((r) => setTimeout(r, 20))
    expect(first.output()).toContain('No application is registered yet. Next steps:')
    expect(first.output()).toContain('npm run demo')
    expect(first.output()).toContain('npm run cli -- clients create')
    expect(first.output()).toContain('npm run cli -- users create')
    expect(first.output()).toContain(join(dataDir, 'admin-token'))

    const tokenFile = join(dataDir, 'admin-token')
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600)
    expect(statSync(join(dataDir, 'key-encryption-key')).mode & 0o777).toBe(0o600)
    const token = readFileSync(tokenFile, 'utf8').trim()
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const body = JSON.stringify({ email: 'kept@example.com', password: 'password-123' })
    const slow = request(`http://127.0.0.1:${adminPort}/admin/users`, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    })
    const answered = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      slow.on('error', reject)
    })
    slow.write(body.slice(0, 10))
    for (let i = 0; i < 100 && !first.output().includes('"method":"POST","url":"/admin/users"'); i++) {
      await new Promise((r) => setTimeout(r, 20))
    }
    first.child.kill('SIGTERM')
    for (let i = 0; i < 100 && !first.output().includes('stopping'); i++)
      await new Promise((r) => setTimeout(r, 20))
    slow.end(body.slice(10))
    expect(await answered).toBe(201)
    expect(await first.exited).toBe(0)
    expect(first.output()).toContain('"msg":"stopped"')
    expect(first.output()).not.toContain(token)

    const second = start(env)
    await waitForHealth(`http://127.0.0.1:${port}/healthz`, second)
    const users = (await (await fetch(`http://127.0.0.1:${adminPort}/admin/users`, { headers })).json()) as {
      users: { email: string }[]
    }
    expect(users.users.map((u: { email: string }) => u.email)).toEqual(['kept@example.com'])
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token)
    second.child.kill('SIGINT')
    expect(await second.exited).toBe(0)
  }, 180_000)

  it.skipIf(testEngine() !== 'postgres')(
    'at LOG_LEVEL=trace its output holds none of the secrets of the whole flow',
    async () => {
      const database = await createTestDatabase()
      try {
        const [port, adminPort] = [await freePort(), await freePort()]
        const adminToken = 'process-admin-token-0123456789abcdefghijkl'
        const running = start({
          LOG_LEVEL: 'trace',
          DATABASE_URL: database.url!,
          DATABASE_POOL_SIZE: '4',
          ADMIN_TOKEN: adminToken,
          COOKIE_SECRET: 'process-cookie-secret-0123456789abcdefghij',
          KEY_ENCRYPTION_KEY: '1'.repeat(64),
          DATA_DIR: dataDir,
          PORT: String(port),
          ADMIN_PORT: String(adminPort),
          HOST: '127.0.0.1',
        })
        await waitForHealth(`http://127.0.0.1:${port}/healthz`, running)
        const { secrets } = await runWholeFlow(
          `http://127.0.0.1:${port}`,
          `http://127.0.0.1:${adminPort}`,
          adminToken,
        )
        running.child.kill('SIGTERM')
        expect(await running.exited).toBe(0)
        const output = running.output()
        expect(output).toContain('/api/oauth/introspect')
        for (const [name, secret] of Object.entries(secrets))
          for (const spelling of spellings(secret)) expect(output.includes(spelling), name).toBe(false)
        for (const secret of ['process-cookie-secret-0123456789abcdefghij', '1'.repeat(64)])
          expect(output).not.toContain(secret)
      } finally {
        await database.close()
      }
    },
    180_000,
  )

  it.skipIf(testEngine() !== 'postgres')(
    'serves from two worker processes on PostgreSQL and stops them all',
    async () => {
      const database = await createTestDatabase()
      try {
        const [port, adminPort] = [await freePort(), await freePort()]
        const running = start({
          WORKERS: '2',
          DATABASE_URL: database.url!,
          DATABASE_POOL_SIZE: '2',
          DATA_DIR: dataDir,
          PORT: String(port),
          ADMIN_PORT: String(adminPort),
          HOST: '127.0.0.1',
        })
        await waitForHealth(`http://127.0.0.1:${port}/healthz`, running)
        // The second worker may still be loading when the first one answers.
        const started = () => running.output().match(/"msg":"linkauth started"/g)?.length ?? 0
        for (let i = 0; i < 600 && started() < 2; i++) await new Promise((r) => setTimeout(r, 100))
        expect(started()).toBe(2)
        for (let i = 0; i < 20; i++) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
        expect(running.output()).toContain('"workers":2,"msg":"started workers"')
        // /metrics on any worker adds up every worker's figures.
        const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()
        const scraped = await fetch(`http://127.0.0.1:${adminPort}/metrics`, {
          headers: { authorization: `Bearer ${token}` },
        })
        expect(scraped.status, await scraped.clone().text()).toBe(200)
        expect(await scraped.text()).toContain(
          'linkauth_http_requests_total{listener="public",method="GET",route="/readyz",status="200"} 20',
        )
        running.child.kill('SIGTERM')
        expect(await running.exited).toBe(0)
        expect(running.output().match(/"msg":"stopped"/g)?.length, running.output()).toBe(3) // two workers and the primary
      } finally {
        await database.close()
      }
    },
    180_000,
  )
})
