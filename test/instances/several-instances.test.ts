import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createResourceVerifier, type ResourceVerifier } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ADMIN_TOKEN } from '../helpers/app.js'
import { createTestDatabase, testEngine, type TestDatabase } from '../helpers/database.js'
import { exchange, type HttpParty, obtainCode, postForm, registerParty } from '../helpers/http-flow.js'
import { freePort } from '../helpers/net.js'
import { checkRedis, deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js'
import { refusal, waitFor } from '../helpers/resource.js'
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/round-robin-proxy.js'
import {
  killStartedServers,
  startServer,
  waitForHealth,
  type ServerProcess,
} from '../helpers/server-process.js'
import { basicAuth } from '../helpers/tokens.js'
import { runWholeFlow } from '../helpers/whole-flow.js'

/**
 * Three server processes (the real entry point) on one PostgreSQL database and one Redis, as a
 * fleet behind a load balancer without session affinity: every step of a flow lands on another
 * instance, a revocation made on one reaches a resource verifier following another's feed, a rate
 * limit counts across all three, and a key rotation on one is published by the others at once.
 */

const INSTANCES = 3
const INTROSPECTION_LIMIT = 40

interface Instance {
  process: ServerProcess
  url: string
  adminUrl: string
}

const onPostgres = testEngine() === 'postgres'
const hasRedis = onPostgres ? await checkRedis() : false
const dataDir = mkdtempSync(join(tmpdir(), 'linkauth-instances-'))
const redisPrefix = uniquePrefix()
let database: TestDatabase
let instances: Instance[]
let proxy: RoundRobinProxy
let adminProxy: RoundRobinProxy

beforeAll(async () => {
  if (!onPostgres || !hasRedis) return
  database = await createTestDatabase()
  const ports = await Promise.all(Array.from({ length: INSTANCES * 2 }, () => freePort()))
  const publicPorts = ports.slice(0, INSTANCES)
  const adminPorts = ports.slice(INSTANCES)
  proxy = await startRoundRobinProxy(publicPorts)
  adminProxy = await startRoundRobinProxy(adminPorts)
  // What a fleet shares: the database, Redis, the secrets, and the one public address (the issuer).
  const shared = {
    DATABASE_URL: database.url!,
    DATABASE_POOL_SIZE: '3',
    REDIS_URL: TEST_REDIS_URL,
    RATE_LIMIT_REDIS_PREFIX: redisPrefix,
    INTROSPECTION_RATE_LIMIT: String(INTROSPECTION_LIMIT),
    ISSUER: proxy.url,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    COOKIE_SECRET: 'instances-cookie-secret-0123456789abcdefghij',
    KEY_ENCRYPTION_KEY: '7'.repeat(64),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  }
  instances = publicPorts.map((port, i) => {
    const adminPort = adminPorts[i]!
    return {
      process: startServer({
        ...shared,
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        DATA_DIR: join(dataDir, String(i)),
      }),
      url: `http://127.0.0.1:${port}`,
      adminUrl: `http://127.0.0.1:${adminPort}`,
    }
  })
  await Promise.all(instances.map((s) => waitForHealth(`${s.url}/readyz`, s.process)))
}, 120_000)

afterAll(async () => {
  killStartedServers()
  await Promise.all([proxy?.close(), adminProxy?.close()])
  await database?.close()
  if (hasRedis) await deleteKeys(redisPrefix)
  rmSync(dataDir, { recursive: true, force: true })
})

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }

/** Authorize on a, the sign-in page on b, sign-in on c, the consent page on a, Allow on b. */
const authorizeAcrossInstances = (party: HttpParty) =>
  obtainCode(
    instances.map((s) => s.url),
    party,
  )

/** The access token's kid (its JOSE header). */
const kidOf = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid

async function jwksKids(instance: Instance): Promise<string[]> {
  const res = await fetch(`${instance.url}/.well-known/jwks.json`)
  return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)
}

// On PostgreSQL only (processes sharing a database); with Redis (the shared rate-limit counts).
describe.skipIf(!onPostgres)('three instances on one database', () => {
  describe.skipIf(!hasRedis)('sharing one Redis', () => {
    it('every step of a flow on another instance: authorize, sign-in, consent, token, refresh, introspect, revoke', async () => {
      const [a, b, c] = instances as [Instance, Instance, Instance]
      const party = await registerParty(c.adminUrl)
      const got = await authorizeAcrossInstances(party)
      const issued = await exchange(c.url, party, got)
      expect(issued.status).toBe(200)

      const refreshed = await postForm(a.url, '/api/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: issued.json.refresh_token as string,
        client_id: party.clientId,
      })
      expect(refreshed.status).toBe(200)
      const access = refreshed.json.access_token as string
      const rsAuth = basicAuth(party.rs.id, party.rs.secret)
      expect((await postForm(b.url, '/api/oauth/introspect', { token: access }, rsAuth)).json).toMatchObject({
        active: true,
        client_id: party.clientId,
      })

      // Revoked on c: the others know at once, whatever their caches held.
      const revoke = (base: string, token: string) =>
        postForm(base, '/api/oauth/revoke', { token, client_id: party.clientId })
      expect((await revoke(c.url, access)).status).toBe(200)
      expect((await postForm(a.url, '/api/oauth/introspect', { token: access }, rsAuth)).json).toEqual({
        active: false,
      })
      expect((await revoke(b.url, refreshed.json.refresh_token as string)).status).toBe(200)
      const afterRevoke = await postForm(a.url, '/api/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshed.json.refresh_token as string,
        client_id: party.clientId,
      })
      expect(afterRevoke).toMatchObject({ status: 400, json: { error: 'invalid_grant' } })
      // The code was used on c: a replay on b is refused.
      expect(await exchange(b.url, party, got)).toMatchObject({
        status: 400,
        json: { error: 'invalid_grant' },
      })
    })

    it('the whole flow behind a round-robin proxy, public and admin, every request on the next instance', async () => {
      const before = proxy.forwarded.length
      await runWholeFlow(proxy.url, adminProxy.url, TEST_ADMIN_TOKEN)
      const seen = proxy.forwarded.slice(before)
      expect(new Set(seen.map((f) => f.instance))).toEqual(new Set([0, 1, 2]))
      // Each kind of step was served by more than one instance somewhere in the flow.
      for (const path of ['/oauth/authorize', '/login', '/api/oauth/token', '/api/oauth/introspect'])
        expect(
          new Set(seen.filter((f) => f.path === path).map((f) => f.instance)).size,
          path,
        ).toBeGreaterThan(1)
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.instance).not.toBe(seen[i - 1]!.instance)
    })

    describe('a resource verifier following one instance’s revocation feed', () => {
      let verifier: ResourceVerifier
      afterAll(() => verifier?.close())

      it('refuses a token revoked on another instance within a second', async () => {
        const [a, b, c] = instances as [Instance, Instance, Instance]
        const party = await registerParty(a.adminUrl)
        // Everything the verifier fetches (metadata, keys, its event stream) goes to b, not the proxy.
        const toB: typeof fetch = (input, init) =>
          fetch(String(input instanceof Request ? input.url : input).replace(proxy.url, b.url), init)
        verifier = await createResourceVerifier({
          issuer: proxy.url,
          resource: `${proxy.url}/api`,
          credentials: party.rs,
          maxFeedStalenessSeconds: 5,
          introspectionCacheSeconds: 0,
          fetch: toB,
        })
        await waitFor(() => verifier.status().mode === 'local' && verifier.status().feedConnected, {
          what: 'the verifier in local mode, its feed connected',
        })
        const tokens = await exchange(c.url, party, await authorizeAcrossInstances(party))
        const access = tokens.json.access_token as string
        await expect(verifier.verify(access)).resolves.toMatchObject({ client_id: party.clientId })
        const introspections = verifier.stats().introspectionCalls

        const revoked = await postForm(a.url, '/api/oauth/revoke', {
          token: access,
          client_id: party.clientId,
        })
        expect(revoked.status).toBe(200)
        const revokedAt = performance.now()
        expect(await refusal(verifier, access)).toBe('token_revoked')
        const elapsed = performance.now() - revokedAt
        console.log(`revocation on instance a reached a verifier on b's feed after ${elapsed.toFixed(0)} ms`)
        expect(elapsed).toBeLessThan(1_000)
        expect(verifier.stats().introspectionCalls).toBe(introspections)
      })
    })

    it('a rate limit counts across the instances through Redis', async () => {
      const { rs } = await registerParty(instances[0]!.adminUrl)
      const auth = basicAuth(rs.id, rs.secret)
      const statuses: number[] = []
      // Spread over the three: alone, each instance would allow INTROSPECTION_LIMIT.
      for (let i = 0; i < INTROSPECTION_LIMIT + 6; i++)
        statuses.push(
          (await postForm(instances[i % INSTANCES]!.url, '/api/oauth/introspect', { token: 'x' }, auth))
            .status,
        )
      expect(statuses.slice(0, INTROSPECTION_LIMIT).every((s) => s === 200)).toBe(true)
      expect(statuses.slice(INTROSPECTION_LIMIT)).toEqual(Array(6).fill(429))
    })

    it('a key rotation on one instance is published by the others at its notification, and verified by all', async () => {
      const [a, b, c] = instances as [Instance, Instance, Instance]
      const party = await registerParty(a.adminUrl)
      // Every instance has just served its key set (and would cache it).
      const before = await jwksKids(b)
      expect(await jwksKids(c)).toEqual(before)

      const rotated = await fetch(`${a.adminUrl}/admin/keys/rotate`, { method: 'POST', headers: admin })
      expect(rotated.status).toBe(201)
      const { kid } = (await rotated.json()) as { kid: string }
      expect(before).not.toContain(kid)

      // b and c serve the key set from memory (no query per request): they publish the new key at the
      // database's notification, well within the 5 s poll that would carry it without one.
      for (const instance of [b, c])
        await waitFor(async () => (await jwksKids(instance)).includes(kid), {
          timeoutMs: 6000,
          what: 'the rotated key in the JWKS of another instance',
        })
      const fromA = await exchange(a.url, party, await authorizeAcrossInstances(party))
      const access = fromA.json.access_token as string
      expect(kidOf(access)).toBe(kid)
      const rsAuth = basicAuth(party.rs.id, party.rs.secret)
      expect((await postForm(b.url, '/api/oauth/introspect', { token: access }, rsAuth)).json).toMatchObject({
        active: true,
      })
      // b and c, having read the new key set, sign with it too.
      const fromB = await postForm(b.url, '/api/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: fromA.json.refresh_token as string,
        client_id: party.clientId,
      })
      expect(kidOf(fromB.json.access_token as string)).toBe(kid)
      const fromC = await postForm(c.url, '/api/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: fromB.json.refresh_token as string,
        client_id: party.clientId,
      })
      expect(kidOf(fromC.json.access_token as string)).toBe(kid)
    })
  })
})
