import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Kysely, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../src/db/migrator.js'
import { migrations } from '../../migrations/index.js'
import { GENEROUS_LIMITS, TEST_ADMIN_TOKEN } from '../helpers/app.js'
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/database.js'
import { exchange, type HttpParty, obtainCode, postForm, registerParty } from '../helpers/http-flow.js'
import { freePort } from '../helpers/net.js'
import { killStartedServers, startScript, waitForHealth } from '../helpers/server-process.js'
import { basicAuth } from '../helpers/tokens.js'

/**
 * Expand/contract, as docs/operating.md's upgrade procedure relies on: the previous version (the
 * commit before the newest migration landed, from git; UPGRADE_FROM=<ref> to choose) serves under
 * load while the new version's migrations apply, with no error; then old and new instances serve side
 * by side on the new schema, each accepting the other's tokens.
 */

const onPostgres = testEngine() === 'postgres'

/** The previous version's ref, or why there is none (not a git checkout, a shallow clone). */
function previousVersion(): { ref: string } | { why: string } {
  if (process.env.UPGRADE_FROM) return { ref: process.env.UPGRADE_FROM }
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' })
  const newest = git('log', '-1', '--format=%H', '--', 'migrations/index.ts')
  if (newest.status !== 0 || !newest.stdout.trim()) return { why: 'not a git checkout with history' }
  const parent = git('rev-parse', '--verify', '--quiet', `${newest.stdout.trim()}^`)
  if (parent.status !== 0)
    return { why: 'the commit before the newest migration is not here (shallow clone?)' }
  return { ref: parent.stdout.trim() }
}

/**
 * The previous version from git is opt-in (UPGRADE_TEST=1): releases before issue 19 have the two
 * faults this file found (docs/operating.md, Upgrading), named prepared statements of every column
 * ("cached plan must not change result type") and migrations ending requests as deadlock victims; it
 * shows them. The current version's case below runs always.
 */
const optedIn = process.env.UPGRADE_TEST === '1'
const previous = !onPostgres
  ? { why: 'PostgreSQL only' }
  : !optedIn
    ? { why: 'opt-in with UPGRADE_TEST=1 (releases before issue 19 fail it: docs/operating.md, Upgrading)' }
    : previousVersion()
if ('why' in previous && onPostgres)
  console.log(`Upgrade test skipped: ${previous.why}; UPGRADE_FROM=<git ref> chooses the previous version`)

const dir = mkdtempSync(join(tmpdir(), 'linkauth-upgrade-'))
let database: TestDatabase | undefined
afterAll(async () => {
  killStartedServers()
  await database?.close()
  rmSync(dir, { recursive: true, force: true })
})

const SECRETS = {
  ...GENEROUS_LIMITS,
  ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  COOKIE_SECRET: 'upgrade-cookie-secret-0123456789abcdefghij',
  KEY_ENCRYPTION_KEY: '6'.repeat(64),
}

/** The server of `root` (a checkout) on the database, its URLs. */
async function serve(root: string, url: string, name: string) {
  const [port, adminPort] = [await freePort(), await freePort()]
  const base = `http://127.0.0.1:${port}`
  const running = startScript(join(root, 'src/main.ts'), {
    ...SECRETS,
    LOG_LEVEL: 'warn',
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '4',
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    ISSUER: 'http://auth.example',
    DATA_DIR: join(dir, `data-${name}`),
  })
  await waitForHealth(`${base}/readyz`, running)
  return { base, adminBase: `http://127.0.0.1:${adminPort}`, running }
}

const refresh = (base: string, party: HttpParty, token: string) =>
  postForm(base, '/api/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: party.clientId,
  })

describe.skipIf(!onPostgres)('an upgrade without downtime', () => {
  it.skipIf('why' in previous)(
    'the previous version serves with no error while the new migrations apply, then beside the new version',
    async () => {
      const ref = (previous as { ref: string }).ref
      const old = join(dir, 'previous')
      execFileSync('sh', [
        '-c',
        `mkdir -p "${old}" && git archive "${ref}" src migrations package.json tsconfig.json | tar -x -C "${old}"`,
      ])
      symlinkSync(join(process.cwd(), 'node_modules'), join(old, 'node_modules'))

      database = await createTestDatabase({ migrated: false })
      const before = await serve(old, database.url!, 'old')
      const applied = async () =>
        Number(
          (await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(database!.db))
            .rows[0]!.n,
        )
      const oldLevel = await applied()
      const newLevel = Object.keys(migrations).length
      console.log(`upgrading ${ref.slice(0, 12)}: ${oldLevel} → ${newLevel} migrations`)
      expect(oldLevel).toBeLessThan(newLevel)

      const party = await registerParty(before.adminBase)
      const first = await exchange(before.base, party, await obtainCode([before.base], party))
      expect(first.status).toBe(200)
      const auth = basicAuth(party.rs.id, party.rs.secret)

      // Load on the previous version: refreshes, introspections, code flows, the key set.
      const failures: string[] = []
      let answered = 0
      let loading = true
      const loop = async (start: string) => {
        let token = start
        while (loading) {
          const next = await refresh(before.base, party, token)
          const seen = await postForm(
            before.base,
            '/api/oauth/introspect',
            { token: next.json.access_token as string },
            auth,
          )
          const keys = await fetch(`${before.base}/.well-known/jwks.json`)
          answered += 3
          if (next.status !== 200) failures.push(`refresh ${next.status} ${JSON.stringify(next.json)}`)
          else token = next.json.refresh_token as string
          if (seen.status !== 200 || seen.json.active !== true) failures.push(`introspect ${seen.status}`)
          if (keys.status !== 200) failures.push(`jwks ${keys.status}`)
        }
      }
      const starts = await Promise.all(
        [0, 1, 2].map(
          async () => (await exchange(before.base, party, await obtainCode([before.base], party))).json,
        ),
      )
      const loads = starts.map((t) => loop(t.refresh_token as string))
      const flows = (async () => {
        while (loading) {
          const got = await exchange(before.base, party, await obtainCode([before.base], party)).catch(
            (err: unknown) => ({ status: 0, json: { error: String(err) } }),
          )
          answered++
          if (got.status !== 200) failures.push(`code flow ${got.status} ${JSON.stringify(got.json)}`)
        }
      })()

      await new Promise((r) => setTimeout(r, 500))
      const { applied: names } = await migrateToLatest(database.db)
      expect(names.length).toBe(newLevel - oldLevel)
      await new Promise((r) => setTimeout(r, 1_000))
      const answeredAtMigration = answered

      // The new version joins on the new schema; the load on the old one goes on meanwhile.
      const after = await serve(process.cwd(), database.url!, 'new')
      const fromOld = await exchange(before.base, party, await obtainCode([before.base], party))
      const onNew = await refresh(after.base, party, fromOld.json.refresh_token as string)
      expect(onNew.status).toBe(200)
      const backOnOld = await refresh(before.base, party, onNew.json.refresh_token as string)
      expect(backOnOld.status).toBe(200)
      expect(
        (
          await postForm(
            after.base,
            '/api/oauth/introspect',
            { token: backOnOld.json.access_token as string },
            auth,
          )
        ).json,
      ).toMatchObject({ active: true })
      loading = false
      await Promise.all([...loads, flows])
      console.log(
        `${answered} answers from the previous version, ${answeredAtMigration} by a second after the migrations`,
      )
      const errors = before.running
        .output()
        .split('\n')
        .filter((l) => /"level":50/.test(l))
      if (errors.length) console.log(errors.slice(0, 3).join('\n').slice(0, 3000))
      expect(failures).toEqual([])
      expect(answered).toBeGreaterThan(answeredAtMigration)
      expect(before.running.output()).not.toMatch(/"level":(50|60)/)
      expect(after.running.output()).not.toMatch(/"level":(50|60)/)
    },
    180_000,
  )

  it('this version serves with no error while a next version’s expand migration applies', async () => {
    const current = await createTestDatabase()
    try {
      const server = await serve(process.cwd(), current.url!, 'current')
      const party = await registerParty(server.adminBase)
      const auth = basicAuth(party.rs.id, party.rs.secret)
      const failures: string[] = []
      let answered = 0
      let loading = true
      const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
      const chain = async (start: string) => {
        let token = start
        while (loading) {
          const next = await refresh(server.base, party, token)
          const seen = await postForm(
            server.base,
            '/api/oauth/introspect',
            { token: next.json.access_token as string },
            auth,
          )
          const clients = await fetch(`${server.adminBase}/admin/clients`, { headers: admin })
          const keys = await fetch(`${server.base}/.well-known/jwks.json`)
          answered += 4
          if (next.status !== 200) failures.push(`refresh ${next.status} ${JSON.stringify(next.json)}`)
          else token = next.json.refresh_token as string
          if (seen.status !== 200 || seen.json.active !== true) failures.push(`introspect ${seen.status}`)
          if (clients.status !== 200) failures.push(`admin clients ${clients.status}`)
          if (keys.status !== 200) failures.push(`jwks ${keys.status}`)
        }
      }
      const starts = await Promise.all(
        [0, 1].map(
          async () => (await exchange(server.base, party, await obtainCode([server.base], party))).json,
        ),
      )
      const loads = starts.map((t) => chain(t.refresh_token as string))
      const flows = (async () => {
        while (loading) {
          const got = await exchange(server.base, party, await obtainCode([server.base], party)).catch(
            (err: unknown) => ({ status: 0, json: { error: String(err) } }),
          )
          answered++
          if (got.status !== 200) failures.push(`code flow ${got.status} ${JSON.stringify(got.json)}`)
        }
      })()
      await new Promise((r) => setTimeout(r, 1_000))

      // What a next release may do (expand only): a column on every table, in one migration.
      const tables = [
        'users',
        'clients',
        'sign_in_sessions',
        'pending_authorizations',
        'grants',
        'authorization_codes',
        'refresh_families',
        'refresh_tokens',
        'revoked_access_tokens',
        'signing_keys',
        'resource_servers',
        'revocation_events',
        'event_streams',
      ]
      const next = {
        ...migrations,
        '9999_expand_probe': {
          up: async (db: Kysely<unknown>) => {
            for (const table of tables)
              await sql`alter table ${sql.table(table)} add column expand_probe text`.execute(db)
          },
        },
      }
      const { applied: names } = await migrateToLatest(current.db, { migrations: next })
      expect(names).toEqual(['9999_expand_probe'])
      const atMigration = answered
      await new Promise((r) => setTimeout(r, 1_500))
      loading = false
      await Promise.all([...loads, flows])
      console.log(`${answered} answers, ${answered - atMigration} after the migration`)
      const errors = server.running
        .output()
        .split('\n')
        .filter((l) => /"level":50/.test(l))
      if (errors.length) console.log(errors.slice(0, 2).join('\n').slice(0, 3000))
      expect(failures).toEqual([])
      expect(answered).toBeGreaterThan(atMigration)
    } finally {
      await current.close()
    }
  }, 120_000)
})
