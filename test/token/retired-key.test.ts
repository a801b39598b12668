import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { epochSeconds } from '../../src/lib/clock.js'
import { signJwt } from '../../src/tokens/access-token.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createTestClock, type TestClock } from '../helpers/clock.js'
import { createParty, exchangeCode, jwtClaims, type Party } from '../helpers/fixtures.js'
import {
  createResourceServer,
  introspect,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

/**
 * A retired signing key is trusted only while it is in the JWKS: a token lifetime plus 60 s after it
 * stopped signing (issue 31). After that a token signed with it, even one forged by someone who holds
 * its private half and even one remembered as verified, is refused by introspection and revocation on
 * every instance. Two apps on one database play two instances.
 */
const MARGIN = 60
let a: TestApp
let b: TestApp
let clock: TestClock
let party: Party
let rs: ResourceServerCredentials
beforeAll(async () => {
  clock = createTestClock(new Date('2026-03-01T12:00:00Z'))
  a = await buildTestApp({ clock })
  b = await buildTestApp({ clock, database: a.database })
  party = await createParty(a)
  rs = await createResourceServer(a)
})
afterAll(async () => {
  await b.close()
  await a.close()
})

const jwksKids = async (t: TestApp) =>
  (
    (await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json().keys as { kid: string }[]
  ).map((k) => k.kid)

describe('a retired signing key', () => {
  it('is refused on every instance once its kid has left the JWKS, forged or remembered tokens alike', async () => {
    const leaked = a.services.signingKeys.activeSigningKey() // its private half, as a thief would hold it
    const live = await exchangeCode(a, party)
    // Both instances have verified (and remembered) a token of the key.
    for (const t of [a, b]) expect((await introspect(t, rs, live.access_token)).active).toBe(true)

    await a.services.signingKeys.rotate()
    await b.services.signingKeys.syncActiveKey() // what b's poll (or the notification) does
    const forge = () => {
      const now = epochSeconds(clock.now())
      return signJwt(
        { typ: 'at+jwt' },
        { ...jwtClaims(live.access_token), iat: now, exp: now + 600, jti: crypto.randomUUID() },
        leaked,
      )
    }
    // Inside the grace (a token lifetime and the margin) the key is still published and trusted.
    clock.advance(a.config.accessTokenTtl + MARGIN - 1)
    for (const t of [a, b]) {
      expect(await jwksKids(t)).toContain(leaked.kid)
      expect((await introspect(t, rs, forge())).active).toBe(true)
    }
    // Past it: out of every JWKS, and refused everywhere, whatever is in memory.
    clock.advance(1)
    const forged = forge()
    for (const t of [a, b]) {
      expect(await jwksKids(t)).not.toContain(leaked.kid)
      expect(await introspect(t, rs, forged)).toEqual({ active: false })
    }
    // Revocation uses the same verifier: the forged token is not even deny-listed.
    for (const t of [a, b])
      expect((await revokeRequest(t, { token: forged, client_id: party.client.id })).statusCode).toBe(200)
    const denied = await a.database.db
      .selectFrom('revoked_access_tokens')
      .select('jti')
      .where('jti', '=', String(jwtClaims(forged).jti))
      .execute()
    expect(denied).toEqual([])
    // Tokens of the new key are unaffected.
    const fresh = await exchangeCode(b, party)
    for (const t of [a, b]) expect((await introspect(t, rs, fresh.access_token)).active).toBe(true)
  })
})
