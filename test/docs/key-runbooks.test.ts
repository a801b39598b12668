import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, TEST_ADMIN_TOKEN } from '../helpers/app.js'
import { createTestDatabase } from '../helpers/database.js'
import { freePort } from '../helpers/net.js'
import { killStartedServers, seededDataDir, startServer, waitForHealth } from '../helpers/server-process.js'
import { runCliWith } from '../helpers/cli.js'

/**
 * The runbooks of docs/operating.md "Respond to a leaked signing key" and "Change the key-encryption
 * key", run as written: each `linkauth …` line of their code blocks (KID filled in), in order.
 */

const doc = readFileSync('docs/operating.md', 'utf8')

/** The `sh` blocks of a section (up to the next heading of its level or above). */
function shBlocks(heading: string): string[] {
  const start = doc.indexOf(heading)
  if (start < 0) throw new Error(`no section ${heading}`)
  const rest = doc.slice(start + heading.length)
  const section = rest.slice(0, rest.search(/\n#{2,3} /))
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

/** The linkauth commands of a block, comments dropped, as argv. */
const commands = (block: string) =>
  block
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l.startsWith('linkauth '))
    .map((l) => l.split(/\s+/).slice(1))

const cli = runCliWith

const folders: string[] = []
afterAll(() => {
  killStartedServers()
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})

describe('docs/operating.md "Respond to a leaked signing key"', () => {
  it('the commands remove the active key and leave another one signing', async () => {
    const t = await buildTestApp()
    try {
      const adminUrl = await t.admin.listen({ port: 0, host: '127.0.0.1' })
      const env = { LINKAUTH_ADMIN_URL: adminUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN }
      const leaked = t.services.signingKeys.activeSigningKey().kid
      const steps = commands(shBlocks('### Respond to a leaked signing key')[0]!)
      expect(steps.map((s) => s.slice(0, 2).join(' '))).toEqual(['keys list', 'keys revoke', 'keys list'])
      const outputs = []
      for (const args of steps) {
        const run = await cli(
          args.map((a) => (a === 'KID' ? leaked : a)),
          env,
        )
        expect(run.code, run.err).toBe(0)
        outputs.push(run.out)
      }
      expect(outputs[0]).toMatch(new RegExp(`${leaked}\\s+ES256\\s+active`))
      expect(outputs[2]).toMatch(new RegExp(`${leaked}\\s+ES256\\s+revoked`))
      expect(outputs[2]).toMatch(/\s+ES256\s+active/)
      const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(leaked)
    } finally {
      await t.close()
    }
  })
})

describe('docs/operating.md "Change the key-encryption key"', () => {
  const blocks = shBlocks('### Change the key-encryption key')

  it('with the key in the environment: rekey under the new key with the old as PREVIOUS, then the new alone', async () => {
    expect(blocks[0]).toContain('openssl rand -hex 32')
    expect(blocks[0]).toMatch(/KEY_ENCRYPTION_KEY=<new key>, KEY_ENCRYPTION_KEY_PREVIOUS=<old key>/)
    const [oldKey, newKey] = ['4d'.repeat(32), '5e'.repeat(32)]
    const database = await createTestDatabase()
    try {
      const before = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: oldKey } })
      await before.close()
      // Step 1: both keys.
      const during = await buildTestApp({
        database,
        env: { KEY_ENCRYPTION_KEY: newKey, KEY_ENCRYPTION_KEY_PREVIOUS: oldKey },
      })
      try {
        const adminUrl = await during.admin.listen({ port: 0, host: '127.0.0.1' })
        const steps = commands(blocks[0]!)
        expect(steps).toEqual([['keys', 'rekey']])
        const run = await cli(steps[0]!, { LINKAUTH_ADMIN_URL: adminUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN })
        expect(run.code, run.err).toBe(0)
        expect(run.out).toMatch(/^re-encrypted 1 keys/)
      } finally {
        await during.close()
      }
      // Step 3: the new key alone.
      const after = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: newKey } })
      await after.close()
    } finally {
      await database.close()
    }
  })

  it('in embedded mode: one command against a real server, which starts again with its DATA_DIR', async () => {
    const dataDir = await seededDataDir('linkauth-runbook-')
    folders.push(dataDir)
    const ports = { PORT: String(await freePort()), ADMIN_PORT: String(await freePort()) }
    const env = { DATA_DIR: dataDir, ...ports }
    let server = startServer(env)
    await waitForHealth(`http://127.0.0.1:${ports.PORT}/healthz`, server)
    const keyFile = join(dataDir, 'key-encryption-key')
    const before = readFileSync(keyFile, 'utf8')
    const steps = commands(blocks[1]!)
    expect(steps).toEqual([['keys', 'rekey']])
    // The CLI finds the admin token in DATA_DIR, as an operator's shell would.
    const run = await cli(steps[0]!, {
      LINKAUTH_ADMIN_URL: `http://127.0.0.1:${ports.ADMIN_PORT}`,
      DATA_DIR: dataDir,
    })
    expect(run.code, run.err).toBe(0)
    expect(run.out).toContain('a new key-encryption key was made in DATA_DIR')
    expect(readFileSync(keyFile, 'utf8')).not.toBe(before)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(server.output()).not.toContain(before.trim())

    server = startServer(env)
    await waitForHealth(`http://127.0.0.1:${ports.PORT}/healthz`, server)
    const jwks = (await (await fetch(`http://127.0.0.1:${ports.PORT}/.well-known/jwks.json`)).json()) as {
      keys: unknown[]
    }
    expect(jwks.keys).toHaveLength(1)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 120_000)

  it('the old key lost for good: the statement given lets the server start with a new key', async () => {
    const statement = /psql "\$DATABASE_URL" -c "([^"]+)"/.exec(blocks.join('\n'))![1]!
    const database = await createTestDatabase()
    try {
      const lost = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: '6f'.repeat(32) } })
      const kid = lost.services.signingKeys.activeSigningKey().kid
      await lost.close()
      await expect(buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: '7a'.repeat(32) } })).rejects.toThrow(
        kid,
      )
      await sql.raw(statement).execute(database.db)
      const t = await buildTestApp({ database, env: { KEY_ENCRYPTION_KEY: '7a'.repeat(32) } })
      try {
        expect(t.services.signingKeys.activeSigningKey().kid).not.toBe(kid)
        const keys = (
          await t.admin.inject({ method: 'GET', url: '/admin/keys', headers: adminHeaders })
        ).json().keys
        expect(keys).toHaveLength(2)
      } finally {
        await t.close()
      }
    } finally {
      await database.close()
    }
  })
})
