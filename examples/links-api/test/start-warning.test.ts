import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import { freePort } from '../../../test/helpers/net.js'
import { registerApi } from '../../../test/helpers/resource-apis.js'
import { createResourceServer } from '../../../test/helpers/tokens.js'

/**
 * `npm run links-api` (its real entry point, as a process) warns once at start when its resource
 * identifier is not among the authorization server's `protected_resources`: registered without
 * --resource (the README's manual setup before issue 26), it would accept no token and say nothing.
 */

let t: TestApp
let issuer: string
const dirs: string[] = []
const children: ChildProcess[] = []
beforeAll(async () => {
  ;({ t, issuer } = await listenTestApp())
})
afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await t.close()
})

/** Starts the links API as `npm run links-api` does; resolves with its log once it says it started. */
async function startLinksApi(credentials: { id: string; secret: string }, port: number): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'links-api-warning-'))
  dirs.push(dataDir)
  const child = spawn(
    process.execPath,
    ['--conditions=linkauth-source', '--import', 'tsx', 'examples/links-api/src/main.ts'],
    {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LINKAUTH_ISSUER: issuer,
        LINKS_PORT: String(port),
        LINKS_DATA_DIR: dataDir,
        LINKS_RESOURCE_SERVER_ID: credentials.id,
        LINKS_RESOURCE_SERVER_SECRET: credentials.secret,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  children.push(child)
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const exited = new Promise((resolve) => child.on('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (output.includes('links API started')) {
        clearInterval(check)
        resolve()
      }
    }, 50)
    void exited.then(() => {
      clearInterval(check)
      reject(new Error(`the links API exited: ${output}`))
    })
  })
  child.kill('SIGTERM')
  await exited
  return output
}

const warnings = (log: string) =>
  log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; resource?: string })
    .filter((record) => record.level === 40 && record.msg.includes('protected_resources'))

it('registered without --resource: one warning at start naming its identifier; registered with it: none', async () => {
  const port = await freePort()
  const resource = `http://localhost:${port}/api`
  const legacy = await startLinksApi(await createResourceServer(t), port)
  expect(warnings(legacy)).toEqual([expect.objectContaining({ resource })])
  expect(warnings(legacy)[0]!.msg).toContain('resource-servers create')

  const registered = await registerApi(t, {
    name: 'Links API',
    resource,
    scopes: ['links:read', 'links:write'],
  })
  expect(warnings(await startLinksApi(registered, port))).toEqual([])
}, 120_000)
