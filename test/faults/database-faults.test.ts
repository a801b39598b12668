import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrator.js'
import { isDatabaseUnavailable } from '../../src/errors.js'
import { sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import { authorizeUrl, Browser, CHALLENGE, hiddenField } from '../helpers/browser.js'
import { createTestDatabase, testEngine } from '../helpers/database.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  type MintedCode,
  mintCode,
  type Party,
  REDIRECT_URI,
  type TokenBody,
  tokenRequest,
} from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import { adminQuery, postgresBinaries, startPrivatePostgres } from '../helpers/private-postgres.js'
import {
  basicAuth,
  createResourceServer,
  introspectRequest,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

/**
 * DESIGN §5: "a database failure answers 503 and leaves no half-written state". Load runs through
 * every kind of request while the database connections are killed, or the database server is
 * stopped and started again; no answer may be a 500, every 503 must be the right kind of error for
 * its endpoint, the database must end consistent, and the same process must serve again by itself.
 */

const PASSWORD = 'correct horse battery' // createParty's
const cleanups: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

type Phase = 'up' | 'down' | 'back'

interface Answer {
  op: string
  phase: Phase
  res: LightMyRequestResponse
}

/** What the load needs, made while the database is up. */
interface Scene {
  t: TestApp
  party: Party
  email: string
  browser: Browser
  rs: ResourceServerCredentials
  codes: MintedCode[]
  accessToken: string
}

async function prepareScene(t: TestApp): Promise<Scene> {
  const party = await createParty(t)
  const email = (await t.services.users.findUser(party.userId))!.email
  const browser = new Browser(t.app)
  expect((await browser.signIn(email, PASSWORD)).statusCode).toBe(303)
  const rs = await createResourceServer(t)
  const codes: MintedCode[] = []
  for (let i = 0; i < 120; i++) codes.push(await mintCode(t, party))
  const first = await exchangeCode(t, party)
  return { t, party, email, browser, rs, codes, accessToken: first.access_token }
}

/** Requests that cannot be answered without the database: while it is gone they must be 503. */
const NEEDS_DATABASE = new Set([
  'exchange',
  'refresh',
  'authorize',
  'account page',
  'account api',
  'introspect',
  'revoke',
  'sign in',
  'readyz',
])

/** A user agent that loops over every kind of request, recording each answer with the phase it began in. */
class Load {
  phase: Phase = 'up'
  readonly answers: Answer[] = []
  /** Every code exchange that was tried, with its answer. */
  readonly exchanges: { code: MintedCode; res: LightMyRequestResponse }[] = []
  private running = true
  private workers: Promise<void>[] = []

  constructor(private readonly scene: Scene) {}

  start(workers: number): void {
    const ops = Object.keys(this.ops)
    this.workers = Array.from({ length: workers }, async (_, w) => {
      let refreshToken: string | undefined
      for (let i = w; this.running; i++) {
        const op = ops[i % ops.length]!
        const phase = this.phase
        const res = await this.ops[op]!({
          refreshToken,
          setRefreshToken: (token) => (refreshToken = token),
        })
        if (res) this.answers.push({ op, phase, res })
        // Keep the event loop breathing (app.inject answers without real I/O when nothing queries).
        await new Promise((r) => setImmediate(r))
      }
    })
  }

  async stop(): Promise<void> {
    this.running = false
    await Promise.all(this.workers)
  }

  private exchange = async (): Promise<LightMyRequestResponse | undefined> => {
    const code = this.scene.codes.pop()
    if (!code) return undefined
    const res = await tokenRequest(this.scene.t, {
      grant_type: 'authorization_code',
      code: code.code,
      code_verifier: code.verifier,
      client_id: this.scene.party.client.id,
    })
    this.exchanges.push({ code, res })
    return res
  }

  private readonly ops: Record<
    string,
    (w: {
      refreshToken: string | undefined
      setRefreshToken(token: string | undefined): void
    }) => Promise<LightMyRequestResponse | undefined>
  > = {
    exchange: () => this.exchange(),
    refresh: async (w) => {
      if (!w.refreshToken) {
        const started = await this.exchange()
        if (started?.statusCode === 200) w.setRefreshToken((started.json() as TokenBody).refresh_token)
        return started
      }
      const res = await tokenRequest(this.scene.t, {
        grant_type: 'refresh_token',
        refresh_token: w.refreshToken,
        client_id: this.scene.party.client.id,
      })
      // A 503 leaves the outcome unknown: the same token is tried again (it rotates or is refused).
      if (res.statusCode === 200) w.setRefreshToken((res.json() as TokenBody).refresh_token)
      else if (res.statusCode === 400) w.setRefreshToken(undefined)
      return res
    },
    authorize: () =>
      this.scene.browser.get(
        authorizeUrl({
          client_id: this.scene.party.client.id,
          redirect_uri: REDIRECT_URI,
          scope: 'links:read',
          code_challenge: CHALLENGE,
          state: 'load',
        }),
      ),
    'account page': () => this.scene.browser.get('/account/apps'),
    'account api': () => this.scene.browser.get('/api/account/apps'),
    introspect: () =>
      introspectRequest(
        this.scene.t,
        { token: this.scene.accessToken },
        basicAuth(this.scene.rs.id, this.scene.rs.secret),
      ),
    revoke: () =>
      revokeRequest(this.scene.t, {
        token: this.scene.accessToken,
        client_id: this.scene.party.client.id,
      }),
    jwks: () => this.scene.t.app.inject({ url: '/.well-known/jwks.json' }),
    metadata: () => this.scene.t.app.inject({ url: '/.well-known/oauth-authorization-server' }),
    readyz: () => this.scene.t.app.inject({ url: '/readyz' }),
    healthz: () => this.scene.t.app.inject({ url: '/healthz' }),
    'sign in': async () => {
      const fresh = new Browser(this.scene.t.app)
      const page = await fresh.get('/login')
      return fresh.post('/login', {
        email: this.scene.email,
        password: PASSWORD,
        csrf_token: hiddenField(page.body, 'csrf_token'),
      })
    },
  }
}

const pathOf = (res: LightMyRequestResponse) => new URL(res.raw.req.url ?? '/', 'http://x').pathname

/** What is wrong with an answer: a 5xx other than 503, or a 503 that is not its endpoint's kind of error. */
function problemWith(answer: Answer): string | undefined {
  const { res, op } = answer
  const path = pathOf(res)
  const describe = () => `${op} ${path} (${answer.phase}) → ${res.statusCode} ${res.body.slice(0, 200)}`
  if (res.statusCode !== 503) return res.statusCode >= 500 ? describe() : undefined
  const type = String(res.headers['content-type'])
  if (res.headers['retry-after'] !== '5') return `no Retry-After: ${describe()}`
  if (path.startsWith('/api/oauth/')) {
    const body = res.json() as { error?: string; error_description?: string }
    if (!type.startsWith('application/json') || body.error !== 'temporarily_unavailable')
      return `not an OAuth error: ${describe()}`
    if (res.headers['cache-control'] !== 'no-store') return `cacheable: ${describe()}`
  } else if (path === '/readyz') {
    if (JSON.stringify(res.json()) !== '{"status":"unavailable","reason":"database_unavailable"}')
      return `readyz: ${describe()}`
  } else if (path.startsWith('/api/') || path.startsWith('/.well-known/')) {
    if (!type.startsWith('application/problem+json') || (res.json() as { status?: number }).status !== 503)
      return `not a problem: ${describe()}`
  } else if (!type.startsWith('text/html') || !/Please try again in a moment/.test(res.body)) {
    return `not a readable page: ${describe()}`
  }
  if (/at .*\.(ts|js):\d+|ECONN|Connection terminated|pg_/i.test(res.body))
    return `leaks internals: ${describe()}`
  return undefined
}

function expectNoProblems(answers: Answer[]): void {
  expect(answers.map(problemWith).filter(Boolean)).toEqual([])
}

/**
 * No request left half-written: every code a 200 answered started its family; every other code
 * is either untouched (the statement never ran) or consumed with its family (the answer was lost).
 * A code whose exchange answered 503 and that is untouched can still be exchanged.
 */
async function expectExchangesWhole(scene: Scene, exchanges: Load['exchanges']): Promise<void> {
  const { db } = scene.t.database
  let retried = 0
  for (const { code, res } of exchanges) {
    const row = await db
      .selectFrom('authorization_codes')
      .select(['consumed_at', 'family_id'])
      .where('code_hash', '=', sha256(code.code))
      .executeTakeFirstOrThrow()
    if (res.statusCode === 200) {
      expect(row.family_id).toBe(jwtClaims((res.json() as TokenBody).access_token).family_id)
      continue
    }
    expect(res.statusCode, res.body).toBe(503)
    expect(row.consumed_at === null || row.family_id !== null, JSON.stringify(row)).toBe(true)
    if (row.consumed_at === null && retried++ < 3) {
      const again = await tokenRequest(scene.t, {
        code: code.code,
        code_verifier: code.verifier,
        client_id: scene.party.client.id,
      })
      expect(again.statusCode, again.body).toBe(200)
    }
  }
  await expectInvariants(db)
}

/** Polls until `ok` holds, or fails after `seconds`. */
async function eventually(what: string, ok: () => Promise<boolean>, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000
  while (!(await ok().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${seconds} s: ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** With the database back, every kind of request succeeds again in the same process. */
async function expectServing(scene: Scene): Promise<void> {
  const { t } = scene
  await eventually('/readyz is 200', async () => (await t.app.inject({ url: '/readyz' })).statusCode === 200)
  const fresh = await exchangeCode(t, scene.party)
  const refreshed = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: fresh.refresh_token,
    client_id: scene.party.client.id,
  })
  expect(refreshed.statusCode, refreshed.body).toBe(200)
  const introspected = await introspectRequest(
    t,
    { token: (refreshed.json() as TokenBody).access_token },
    basicAuth(scene.rs.id, scene.rs.secret),
  )
  expect(introspected.json()).toMatchObject({ active: true })
  const authorize = await scene.browser.get(
    authorizeUrl({
      client_id: scene.party.client.id,
      redirect_uri: REDIRECT_URI,
      scope: 'links:read',
      code_challenge: CHALLENGE,
    }),
  )
  expect(authorize.statusCode, authorize.body).toBe(302)
  expect((await scene.browser.get('/account/apps')).statusCode).toBe(200)
  expect((await t.app.inject({ url: '/.well-known/jwks.json' })).statusCode).toBe(200)
  const user = await t.admin.inject({ url: '/admin/users', headers: adminHeaders })
  expect(user.statusCode).toBe(200)
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.skipIf(testEngine() !== 'postgres')('PostgreSQL connections killed under load', () => {
  it('a connection killed between the statements of a transaction fails it as unavailable; the process lives on', async () => {
    const database = await createTestDatabase({ poolSize: 2 })
    const killer = new pg.Client({ connectionString: database.url })
    await killer.connect()
    cleanups.push(async () => {
      await killer.end()
      await database.close()
    })
    // pg emits 'error' on a checked-out client whose connection dies; unheard, that ends the process.
    const uncaught: unknown[] = []
    const listener = (err: unknown) => uncaught.push(err)
    process.on('uncaughtException', listener)
    try {
      const failure = await database.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
          await killer.query('select pg_terminate_backend($1)', [rows[0]!.pid])
          await pause(300) // the connection dies while the transaction holds it
          await sql`select 1`.execute(trx)
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        )
      expect(isDatabaseUnavailable(failure), String(failure)).toBe(true)
      await pause(100)
      expect(uncaught).toEqual([])
      // The broken connection left the pool: the next statements get healthy ones.
      for (let i = 0; i < 4; i++)
        expect((await sql<{ n: number }>`select 1 as n`.execute(database.db)).rows).toEqual([{ n: 1 }])
    } finally {
      process.off('uncaughtException', listener)
    }
  })

  it(
    'answers 503 or the normal answer, never 500; nothing half-written; serves on',
    { timeout: 120_000 },
    async () => {
      const database = await createTestDatabase({ poolSize: 6 })
      const t = await buildTestApp({ database, env: { ...GENEROUS_LIMITS, AUTH_CODE_TTL: '600' } })
      cleanups.push(async () => {
        await t.close()
        await database.close()
      })
      const scene = await prepareScene(t)
      const killer = new pg.Client({ connectionString: database.url })
      await killer.connect()
      cleanups.push(() => killer.end())
      const load = new Load(scene)
      load.start(6)
      let killed = 0
      for (let round = 0; round < 15; round++) {
        await pause(150)
        const { rows } = await killer.query<{ pid: number }>(
          `select pid from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
        )
        for (const { pid } of rows) await killer.query('select pg_terminate_backend($1)', [pid])
        killed += rows.length
      }
      await pause(300)
      await load.stop()
      expect(killed).toBeGreaterThan(10)
      expectNoProblems(load.answers)
      // The kills were felt, and the load went on around them.
      expect(load.answers.filter((a) => a.res.statusCode === 503).length).toBeGreaterThan(0)
      expect(load.answers.filter((a) => a.res.statusCode === 200).length).toBeGreaterThan(50)
      await expectServing(scene)
      await expectExchangesWhole(scene, load.exchanges)
    },
  )
})

const binaries = postgresBinaries()

describe.skipIf(!binaries)('PostgreSQL stopped under load and started again', () => {
  it(
    '503 while it is gone (readyz too, healthz alive), consistent after, serving again without a restart',
    { timeout: 180_000 },
    async () => {
      const server = await startPrivatePostgres()
      cleanups.push(() => server.destroy())
      await adminQuery(server.adminUrl, 'create database linkauth')
      const url = server.adminUrl.replace(/\/postgres$/, '/linkauth')
      const database = await connectDatabase({ databaseUrl: url, poolSize: 6 })
      await migrateToLatest(database.db)
      const t = await buildTestApp({ database, env: { ...GENEROUS_LIMITS, AUTH_CODE_TTL: '600' } })
      cleanups.push(async () => {
        await t.close()
        await database.close()
      })
      const scene = await prepareScene(t)
      const load = new Load(scene)
      load.start(6)
      await pause(500)

      await server.stop()
      load.phase = 'down'
      await pause(2_000)
      const ready = await t.app.inject({ url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json()).toEqual({ status: 'unavailable', reason: 'database_unavailable' })
      expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200)

      // From here on answers may come from the database again.
      load.phase = 'back'
      await server.start()
      await expectServing(scene)
      await pause(1_000)
      await load.stop()

      expectNoProblems(load.answers)
      const down = load.answers.filter((a) => a.phase === 'down')
      // Everything that needs the database answered 503 while it was gone, and each kind was tried.
      const downOps = new Set(down.map((a) => a.op))
      for (const op of NEEDS_DATABASE) expect(downOps, op).toContain(op)
      for (const a of down.filter((x) => NEEDS_DATABASE.has(x.op)))
        expect(a.res.statusCode, `${a.op}: ${a.res.body.slice(0, 200)}`).toBe(503)
      for (const a of down.filter((x) => x.op === 'healthz')) expect(a.res.statusCode).toBe(200)
      expect(
        load.answers.filter((a) => a.phase === 'back' && a.res.statusCode === 200).length,
      ).toBeGreaterThan(20)
      await expectExchangesWhole(scene, load.exchanges)

      // The signing-key poll came back too: a rotation made by another instance reaches this one.
      const other = await buildTestApp({ database, env: GENEROUS_LIMITS })
      cleanups.push(() => other.close())
      const rotated = await other.admin.inject({
        method: 'POST',
        url: '/admin/keys/rotate',
        headers: adminHeaders,
      })
      expect(rotated.statusCode).toBe(201)
      const kid = (rotated.json() as { kid: string }).kid
      await eventually(
        'this instance signs with the key rotated elsewhere',
        async () => {
          const tokens = await exchangeCode(t, scene.party)
          const header = JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString())
          return header.kid === kid
        },
        15,
      )
    },
  )
})
