/**
 * Introspection cost at the service level (no HTTP): local JWT verification alone, node:crypto
 * against jose, and the whole introspection of an access token (verify + the liveness query, which
 * the calls in flight share: src/db/batched-lookup.ts) with N calls in flight.
 * Run: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/introspect.ts
 * (a scratch database is created next to the given one and dropped afterwards).
 */
import { randomBytes } from 'node:crypto'
import { createLocalJWKSet, jwtVerify } from 'jose'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrator.js'
import { upsertGrant } from '../src/grants/grant.repository.js'
import { systemClock } from '../src/lib/clock.js'
import { randomToken, sha256 } from '../src/lib/secrets.js'
import { createLogger } from '../src/logger.js'
import { createServices } from '../src/services.js'
import { createAccessTokenVerifier } from '../src/tokens/access-token-verifier.js'

const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const seconds = Number(process.env.SECONDS ?? 3)
const inFlight = Number(process.env.IN_FLIGHT ?? 32)
/** A resource server registered without a resource: it introspects default-audience tokens. */
const DEFAULT_AUDIENCE_CALLER = { resource: null }

async function measure(label: string, fn: () => Promise<unknown>, parallel = 1): Promise<void> {
  const end = performance.now() + seconds * 1000
  let n = 0
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < end) {
        await fn()
        n++
      }
    }),
  )
  console.log(`${label.padEnd(48)} ${Math.round(n / seconds).toLocaleString('en')} calls/s`)
}

const name = `linkauth_bench_${randomBytes(4).toString('hex')}`
const admin = new pg.Client({ connectionString: adminUrl })
await admin.connect()
await admin.query(`create database ${name}`)
const url = new URL(adminUrl)
url.pathname = `/${name}`
const database = await connectDatabase({ databaseUrl: url.toString(), poolSize: 10 })
try {
  await migrateToLatest(database.db)
  const config = loadConfig({ NODE_ENV: 'test', KEY_ENCRYPTION_KEY: '0'.repeat(64), LOG_LEVEL: 'silent' })
  const services = createServices({
    config,
    db: database.db,
    clock: systemClock,
    logger: createLogger('silent'),
  })
  await services.signingKeys.start()
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
  const { familyId } = (await database.db
    .insertInto('refresh_families')
    .values({
      grant_id: grant.id,
      client_id: client.id,
      user_id: user.id,
      scopes: ['links:read'],
      expires_at: new Date(Date.now() + 3600_000),
    })
    .returning('id as familyId')
    .executeTakeFirstOrThrow()) as { familyId: string }
  await database.db
    .insertInto('refresh_tokens')
    .values({
      token_hash: sha256(randomToken()),
      family_id: familyId,
      scopes: ['links:read'],
      expires_at: new Date(Date.now() + 3600_000),
    })
    .execute()
  const { accessToken } = services.accessTokens.issueAccessToken({
    userId: user.id,
    clientId: client.id,
    scopes: ['links:read'],
    grantId: grant.id,
    familyId,
    clientStanding: 'verified',
  })
  if (!(await services.introspection.introspect(accessToken, DEFAULT_AUDIENCE_CALLER)).active)
    throw new Error('token not active')

  const jwks = createLocalJWKSet({ keys: (await services.signingKeys.publishedJwks()) as never })
  const fresh = () =>
    services.accessTokens.issueAccessToken({
      userId: user.id,
      clientId: client.id,
      scopes: ['links:read'],
      grantId: grant.id,
      familyId,
      clientStanding: 'verified',
    }).accessToken
  const distinct = Array.from({ length: 2000 }, fresh)
  let i = 0
  const uncached = createAccessTokenVerifier(config, systemClock, services.signingKeys, { cacheSize: 0 })
  await measure('verify, node:crypto, uncached', () => uncached.verify(distinct[i++ % distinct.length]!))
  await measure('verify, node:crypto, a token seen before (cached)', () =>
    services.accessTokenVerifier.verify(accessToken),
  )
  await measure('verify, jose jwtVerify + local JWKS', () =>
    jwtVerify(accessToken, jwks, { issuer: config.issuer, typ: 'at+jwt' }),
  )
  await measure(
    `introspect, one token again and again, ${inFlight} in flight`,
    () => services.introspection.introspect(accessToken, DEFAULT_AUDIENCE_CALLER),
    inFlight,
  )
  const many = Array.from({ length: 50_000 }, fresh)
  let j = 0
  await measure(
    `introspect, a new token each call, ${inFlight} in flight`,
    () => services.introspection.introspect(many[j++ % many.length]!, DEFAULT_AUDIENCE_CALLER),
    inFlight,
  )
  await services.signingKeys.stop()
} finally {
  await database.close()
  await admin.query(`drop database ${name} with (force)`)
  await admin.end()
}
