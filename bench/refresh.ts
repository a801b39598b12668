/**
 * Rough refresh-token throughput: one server process, N parallel refresh chains over real HTTP
 * (the load generator shares the machine, so this understates the server).
 * Run: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/refresh.ts
 * (a scratch database is created next to the given one and dropped afterwards).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrator.js'
import { insertAuthorizationCode } from '../src/grants/authorization-code.repository.js'
import { upsertGrant } from '../src/grants/grant.repository.js'
import { addSeconds, systemClock } from '../src/lib/clock.js'
import { s256Challenge } from '../src/lib/pkce.js'
import { randomToken, sha256 } from '../src/lib/secrets.js'
import { createLogger } from '../src/logger.js'
import { createServices } from '../src/services.js'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const chains = Number(process.env.CHAINS ?? 32)
const seconds = Number(process.env.SECONDS ?? 10)

const name = `linkauth_bench_${randomBytes(4).toString('hex')}`
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
await admin.query(`create database ${name}`)
const url = new URL(adminUrl)
url.pathname = `/${name}`
const database = await connectDatabase({ databaseUrl: url.toString(), poolSize: 20 })
try {
  await migrateToLatest(database.db)
  const config = loadConfig({ NODE_ENV: 'test', KEY_ENCRYPTION_KEY: '0'.repeat(64), LOG_LEVEL: 'silent' })
  const deps = { config, db: database.db, clock: systemClock, logger: createLogger('silent') }
  const services = createServices(deps)
  const app = await buildApp({ ...deps, services })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const user = await services.users.createUser({ email: 'bench@example.com', password: 'bench-password' })
  const client = await services.clients.createClient({
    name: 'Bench',
    redirect_uris: ['https://b.example/cb'],
  })
  const grant = await upsertGrant(
    database.db,
    { userId: user.id, clientId: client.id, scopes: ['links:read'] },
    new Date(),
  )

  const post = async (params: Record<string, string>) => {
    const res = await fetch(`${base}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params),
    })
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`)
    return (await res.json()) as { refresh_token: string }
  }
  const tokens = await Promise.all(
    Array.from({ length: chains }, async () => {
      const code = randomToken()
      const verifier = randomToken(48)
      const now = new Date()
      await insertAuthorizationCode(database.db, {
        codeHash: sha256(code),
        clientId: client.id,
        userId: user.id,
        grantId: grant.id,
        redirectUri: 'https://b.example/cb',
        scopes: ['links:read'],
        codeChallenge: s256Challenge(verifier),
        createdAt: now,
        expiresAt: addSeconds(now, 60),
      })
      return (await post({ code, code_verifier: verifier, client_id: client.id })).refresh_token
    }),
  )
  let done = 0
  const end = Date.now() + seconds * 1000
  await Promise.all(
    tokens.map(async (token) => {
      while (Date.now() < end) {
        token = (await post({ grant_type: 'refresh_token', refresh_token: token, client_id: client.id }))
          .refresh_token
        done++
      }
    }),
  )
  console.log(`${chains} chains, ${seconds} s: ${Math.round(done / seconds)} refreshes/s`)
  await app.close()
} finally {
  await database.close()
  await admin.query(`drop database if exists ${name} with (force)`)
  await admin.end()
}
