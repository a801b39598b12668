import { performance } from 'node:perf_hooks'
import { createResourceVerifier } from '@linkauth/resource'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/logger.js'
import { createSigningKeyService } from '../../src/tokens/signing-key.service.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { createParty, exchangeCode } from '../helpers/fixtures.js'
import { accessToken, captureLogger, startAuthServer, waitFor } from '../helpers/resource.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Emergency removal of a signing key (POST /admin/keys/:kid/revoke): gone from the JWKS and refused
 * by introspection at once on every instance, announced on the revocation feed, and never leaving
 * the server without a key that signs.
 */

const KEY_REVOKED = 'urn:linkauth:event:key-revoked'

describe('revoking a key on one of two instances', () => {
  let database: TestDatabase
  let a: TestApp
  let b: TestApp
  let rs: ResourceServerCredentials

  beforeAll(async () => {
    database = await createTestDatabase()
    a = await buildTestApp({ database })
    b = await buildTestApp({ database })
    rs = await createResourceServer(a)
  })
  afterAll(async () => {
    await Promise.all([a.close(), b.close()])
    await database.close()
  })

  const revoke = (kid: string, t = a) =>
    t.admin.inject({ method: 'POST', url: `/admin/keys/${kid}/revoke`, headers: adminHeaders })
  const jwksKids = async (t: TestApp) =>
    (
      (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as { kid: string }[]
    ).map((k) => k.kid)
  const tokenOf = async (t: TestApp) => (await exchangeCode(t, await createParty(t))).access_token
  const kidOf = (token: string) => decodeProtectedHeader(token).kid!
  const pollFeed = async (streamId: string) =>
    a.services.events.poll(rs.id, streamId, { ack: [], setErrs: {}, maxEvents: 100, returnImmediately: true })

  it('a retired key: out of every JWKS, refused by every introspection, announced once on the feed', async () => {
    const streamId = (await a.services.events.createStream(rs.id))!
    const leaked = await tokenOf(a)
    const kid = kidOf(leaked)
    await a.services.signingKeys.rotate()
    await b.services.signingKeys.syncActiveKey()
    // Both instances accept it before (and b remembers it as verified).
    expect((await introspect(a, rs, leaked)).active).toBe(true)
    expect((await introspect(b, rs, leaked)).active).toBe(true)
    expect(await jwksKids(b)).toContain(kid)

    const res = await revoke(kid)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      revoked: { kid, state: 'revoked', active: false },
      replacement: null,
      already_revoked: false,
    })
    // At once on this instance; on the other at the database's notification, not a poll later.
    expect(await jwksKids(a)).not.toContain(kid)
    expect((await introspect(a, rs, leaked)).active).toBe(false)
    const started = performance.now()
    await waitFor(async () => !(await jwksKids(b)).includes(kid), {
      timeoutMs: 3000,
      what: 'b to drop the key',
    })
    await waitFor(async () => (await introspect(b, rs, leaked)).active === false, {
      timeoutMs: 3000,
      what: 'b to refuse its token',
    })
    expect(performance.now() - started).toBeLessThan(3000)

    // The feed carries one key-revoked event naming the kid, alive as long as its tokens could be.
    const { sets } = await pollFeed(streamId)
    const events = Object.values(sets)
      .map((jws) => decodeJwt(jws).events as Record<string, { kid?: string; until: number }>)
      .filter((e) => KEY_REVOKED in e)
    expect(events).toHaveLength(1)
    expect(events[0]![KEY_REVOKED]!.kid).toBe(kid)
    const until = events[0]![KEY_REVOKED]!.until * 1000
    expect(until - Date.now()).toBeGreaterThan((a.config.accessTokenTtl - 5) * 1000)

    // Again: nothing changes, no second event.
    const again = await revoke(kid, b)
    expect(again.statusCode).toBe(200)
    expect(again.json().already_revoked).toBe(true)
    const rows = await database.db
      .selectFrom('revocation_events')
      .select('kid')
      .where('type', '=', 'key-revoked')
      .execute()
    expect(rows.map((r) => r.kid)).toEqual([kid])
    // Never found by kid again, not even through the lookup of unknown kids.
    expect(await b.services.signingKeys.verificationKey(kid)).toBeUndefined()
  })

  it('the active key: a new key signs first, on both instances; the server never lacks one', async () => {
    const before = await tokenOf(a)
    const kid = kidOf(before)
    const res = await revoke(kid)
    expect(res.statusCode).toBe(200)
    const replacement = res.json().replacement as { kid: string; state: string }
    expect(replacement).toMatchObject({ state: 'active' })
    expect(replacement.kid).not.toBe(kid)
    expect(kidOf(await tokenOf(a))).toBe(replacement.kid)
    await waitFor(() => b.services.signingKeys.activeSigningKey().kid === replacement.kid, {
      timeoutMs: 3000,
      what: 'b to sign with the replacement',
    })
    expect(kidOf(await tokenOf(b))).toBe(replacement.kid)
    expect((await introspect(b, rs, before)).active).toBe(false)
    for (const t of [a, b]) expect(await jwksKids(t)).toEqual(expect.arrayContaining([replacement.kid]))
    for (const t of [a, b]) expect(await jwksKids(t)).not.toContain(kid)
    const active = await database.db
      .selectFrom('signing_keys')
      .select('kid')
      .where('retired_at', 'is', null)
      .execute()
    expect(active.map((r) => r.kid)).toEqual([replacement.kid])
  })

  it('answers 404 for an unknown kid, 400 naming the kid for a malformed one, 401 without the token', async () => {
    const unknown = await revoke('A'.repeat(43))
    expect(unknown.statusCode).toBe(404)
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/)
    const malformed = await revoke('no.such%20kid')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().detail).toMatch(/^kid: /)
    const anonymous = await a.admin.inject({ method: 'POST', url: `/admin/keys/${'A'.repeat(43)}/revoke` })
    expect(anonymous.statusCode).toBe(401)
  })

  it('409 when the active key cannot be replaced (no key-encryption key to make one); nothing changes', async () => {
    const kid = a.services.signingKeys.activeSigningKey().kid
    const keyless = createSigningKeyService({
      db: database.db,
      clock: a.clock,
      logger: createLogger('silent'),
      config: { ...a.config, keyEncryptionKey: undefined },
    })
    await expect(keyless.revoke(kid)).rejects.toMatchObject({ status: 409 })
    const row = await database.db
      .selectFrom('signing_keys')
      .selectAll()
      .where('kid', '=', kid)
      .executeTakeFirstOrThrow()
    expect(row).toMatchObject({ retired_at: null, revoked_at: null })
  })
})

describe('revoking with the rotation schedule on', () => {
  it('the active key is replaced by the published next key; a next key revoked never signs', async () => {
    const clock = createTestClock(new Date('2026-06-01T00:00:00Z'))
    const t = await buildTestApp({ clock, env: { SIGNING_KEY_ROTATION: '1h' } })
    try {
      const keys = t.services.signingKeys
      clock.advance(3600)
      const first = (await keys.runSchedule()).prepared!
      const active = keys.activeSigningKey().kid
      const res = await t.admin.inject({
        method: 'POST',
        url: `/admin/keys/${active}/revoke`,
        headers: adminHeaders,
      })
      expect(res.json().replacement.kid).toBe(first.kid)
      expect(keys.activeSigningKey().kid).toBe(first.kid)

      clock.advance(3600)
      const second = (await keys.runSchedule()).prepared!
      const revoked = await t.admin.inject({
        method: 'POST',
        url: `/admin/keys/${second.kid}/revoke`,
        headers: adminHeaders,
      })
      expect(revoked.json()).toMatchObject({ revoked: { state: 'revoked' }, replacement: null })
      expect(keys.nextKey()).toBeUndefined()
      const jwks = (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json()
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(second.kid)
      clock.set(second.activatesAt)
      expect(keys.activeSigningKey().kid).toBe(first.kid)
      expect((await keys.runSchedule()).activated).toBeUndefined()
    } finally {
      await t.close()
    }
  })
})

describe('a resource API following the feed with @linkauth/resource', () => {
  it('drops a revoked key and refetches the JWKS within a second; tokens of other keys pass', async () => {
    const server = await startAuthServer()
    const credentials = await createResourceServer(server.t)
    const verifier = await createResourceVerifier({
      issuer: server.issuer,
      resource: server.t.config.accessTokenAudience,
      credentials,
      introspectionCacheSeconds: 0,
      logger: captureLogger().logger,
    })
    const revoke = (kid: string) =>
      server.t.admin.inject({ method: 'POST', url: `/admin/keys/${kid}/revoke`, headers: adminHeaders })
    const refusal = (token: string) =>
      waitFor(
        () =>
          verifier.verify(token).then(
            () => false,
            (err: { code: string }) => err.code,
          ),
        { timeoutMs: 1000, intervalMs: 5, what: 'the token of the revoked key to be refused' },
      )
    try {
      await waitFor(() => verifier.status().mode === 'local', { what: 'local mode' })
      const party = await createParty(server.t)
      // A leaked key that no longer signs: the feed's events come signed with a key the verifier
      // already has, so only the event itself can make it drop the leaked one.
      const leaked = await accessToken(server.t, party)
      await server.t.services.signingKeys.rotate()
      const current = await accessToken(server.t, party)
      await verifier.verify(leaked)
      // A new kid is fetched at most once a second (the toolkit's floor against made-up kids).
      await waitFor(
        () =>
          verifier.verify(current).then(
            () => true,
            () => false,
          ),
        { what: 'the new key' },
      )
      const fetches = verifier.stats().jwksFetches
      const introspections = verifier.stats().introspectionCalls

      expect((await revoke(decodeProtectedHeader(leaked).kid!)).statusCode).toBe(200)
      const revokedAt = performance.now()
      expect(await refusal(leaked)).toBe('unknown_key')
      expect(performance.now() - revokedAt).toBeLessThan(1000)
      expect(verifier.stats().jwksFetches).toBeGreaterThan(fetches)
      expect(verifier.stats().introspectionCalls).toBe(introspections)
      await expect(verifier.verify(current)).resolves.toMatchObject({ sub: party.userId })

      // The active key: refused as fast, and the replacement's tokens pass.
      const res = await revoke(decodeProtectedHeader(current).kid!)
      expect(await refusal(current)).toBe('unknown_key')
      const fresh = await accessToken(server.t, party)
      expect(decodeProtectedHeader(fresh).kid).toBe(res.json().replacement.kid)
      await expect(verifier.verify(fresh)).resolves.toMatchObject({ sub: party.userId })
    } finally {
      await verifier.close()
      await server.close()
    }
  })
})
