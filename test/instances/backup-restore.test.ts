import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { GENEROUS_LIMITS, TEST_ADMIN_TOKEN } from '../helpers/app.js'
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/database.js'
import { exchange, type HttpParty, obtainCode, postForm, registerParty } from '../helpers/http-flow.js'
import { freePort } from '../helpers/net.js'
import { createEmptyDatabase, databaseUrl, dropDatabase } from '../helpers/postgres-admin.js'
import { killStartedServers, startServer, waitForHealth } from '../helpers/server-process.js'
import { basicAuth } from '../helpers/tokens.js'

/**
 * The backup and restore drill of docs/operating.md, as a test: pg_dump while the server is under
 * load, pg_restore into a new database, a server started on it with the same secrets. Signing keys
 * decrypt, live refresh tokens rotate, revoked grants stay revoked, and the load saw no error.
 */
const run = promisify(execFile)
const onPostgres = testEngine() === 'postgres'
const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-backup-'))
const SECRETS = {
  ...GENEROUS_LIMITS,
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  COOKIE_SECRET: 'backup-cookie-secret-0123456789abcdefghijk',
  KEY_ENCRYPTION_KEY: '4'.repeat(64),
}
let database: TestDatabase | undefined
let restoredName: string | undefined

afterAll(async () => {
  killStartedServers()
  await database?.close()
  const chosen = inject('testDatabase')
  if (restoredName && chosen.engine === 'postgres') await dropDatabase(chosen.adminUrl, restoredName)
  rmSync(dataDir, { recursive: true, force: true })
})

async function serverOn(url: string, name: string) {
  const [port, adminPort] = [await freePort(), await freePort()]
  const base = `http://127.0.0.1:${port}`
  const running = startServer({
    ...SECRETS,
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '4',
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    ISSUER: 'http://auth.example',
    DATA_DIR: join(dataDir, name),
    LOG_LEVEL: 'warn',
    REFRESH_REUSE_WINDOW: '0',
  })
  await waitForHealth(`${base}/readyz`, running)
  return { base, adminBase: `http://127.0.0.1:${adminPort}`, running }
}

const kidOf = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid

const refresh = (base: string, party: HttpParty, token: string) =>
  postForm(base, '/api/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: party.clientId,
  })

describe.skipIf(!onPostgres)('backup and restore drill', () => {
  it('pg_dump under load, pg_restore into a new database, a server on it: keys, live and revoked grants', async () => {
    database = await createTestDatabase()
    const original = await serverOn(database.url!, 'original')
    const party = await registerParty(original.adminBase)
    const issue = async () => exchange(original.base, party, await obtainCode([original.base], party))
    const live = (await issue()).json
    const revoked = (await issue()).json
    const busy = (await issue()).json
    const untouched = (await issue()).json
    expect(
      (
        await postForm(original.base, '/api/oauth/revoke', {
          token: revoked.refresh_token as string,
          client_id: party.clientId,
        })
      ).status,
    ).toBe(200)
    const keysBefore = (await (await fetch(`${original.base}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[]
    }

    // Load while the dump runs: a refresh chain and introspections, every answer counted.
    const auth = basicAuth(party.rs.id, party.rs.secret)
    const failures: string[] = []
    let answered = 0
    let loading = true
    const load = (async () => {
      let token = busy.refresh_token as string
      while (loading) {
        const next = await refresh(original.base, party, token)
        const seen = await postForm(
          original.base,
          '/api/oauth/introspect',
          { token: live.access_token as string },
          auth,
        )
        answered += 2
        if (next.status !== 200) failures.push(`refresh ${next.status}`)
        else token = next.json.refresh_token as string
        if (seen.status !== 200 || seen.json.active !== true) failures.push(`introspect ${seen.status}`)
      }
    })()

    const chosen = inject('testDatabase')
    if (chosen.engine !== 'postgres') throw new Error('PostgreSQL only')
    const dump = join(dataDir, 'linkauth.dump')
    await run('pg_dump', ['-Fc', '--no-owner', '-f', dump, database.url!])
    restoredName = await createEmptyDatabase(chosen.adminUrl)
    const restoredUrl = databaseUrl(chosen.adminUrl, restoredName)
    loading = false
    await load
    expect(failures).toEqual([])
    expect(answered).toBeGreaterThan(0)
    await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', restoredUrl, dump])
    original.running.child.kill('SIGTERM')

    const restored = await serverOn(restoredUrl, 'restored')
    // Signing keys decrypt: the restored server signs with the key that was active at the dump.
    const rotated = await refresh(restored.base, party, live.refresh_token as string)
    expect(rotated.status).toBe(200)
    expect(kidOf(rotated.json.access_token as string)).toBe(kidOf(live.access_token as string))
    expect(keysBefore.keys.map((k) => k.kid)).toContain(kidOf(rotated.json.access_token as string))
    // The live refresh token rotated once: the new one rotates again, the old one is a replay (the
    // servers run with REFRESH_REUSE_WINDOW=0, so there is no retry window to wait out).
    expect((await refresh(restored.base, party, rotated.json.refresh_token as string)).status).toBe(200)
    expect(await refresh(restored.base, party, live.refresh_token as string)).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    })
    // The grant revoked before the dump stays revoked.
    expect(await refresh(restored.base, party, revoked.refresh_token as string)).toMatchObject({
      status: 400,
      json: { error: 'invalid_grant' },
    })
    const introspect = (token: string) =>
      postForm(restored.base, '/api/oauth/introspect', { token }, auth).then((r) => r.json)
    expect(await introspect(revoked.access_token as string)).toEqual({ active: false })
    // Tokens issued before the dump by the original server verify on the restored one.
    expect(await introspect(untouched.access_token as string)).toMatchObject({ active: true })
    // And a new sign-in works end to end.
    const fresh = await exchange(restored.base, party, await obtainCode([restored.base], party))
    expect(fresh.status).toBe(200)
    expect(restored.running.output()).not.toMatch(/"level":(50|60)/)
  }, 120_000)
})
