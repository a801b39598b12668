import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

/** The real entry point (src/main.ts) as a process: start-up, config errors, data kept, graceful stop. */

const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-process-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

interface Running {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

function start(env: Record<string, string>): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

async function waitForHealth(url: string, running: Running): Promise<void> {
  // Generous: on a loaded 2-core machine a cold tsx + PGlite start has taken over 20 s.
  for (let i = 0; i < 400; i++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    if (running.child.exitCode !== null) throw new Error(`server exited: ${running.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`server did not become healthy: ${running.output()}`)
}

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
  }, 120_000)
})
