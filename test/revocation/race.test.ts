import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createParty, exchangeCode, type TokenBody, tokenRequest } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

let t: TestApp
let rs: ResourceServerCredentials
beforeAll(async () => {
  t = await buildTestApp()
  rs = await createResourceServer(t)
})
afterAll(async () => t.close())

/**
 * Revocation racing refreshes (real concurrency on PostgreSQL; PGlite serialises): whatever the
 * order, once both have finished no token of the grant refreshes or introspects active.
 */
it('revoking a grant while its families refresh leaves no usable token', { timeout: 120_000 }, async () => {
  for (let round = 0; round < 8; round++) {
    const party = await createParty(t)
    const families = await Promise.all([1, 2, 3].map(() => exchangeCode(t, party)))
    const refresh = (token: string) =>
      tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id })
    const [, ...refreshed] = await Promise.all([
      t.services.connectedApps.revoke(party.userId, party.client.id),
      ...families.map((f) => refresh(f.refresh_token)),
    ])
    const issued: TokenBody[] = [
      ...families,
      ...refreshed.filter((r) => r.statusCode === 200).map((r) => r.json() as TokenBody),
    ]
    for (const tokens of issued) {
      expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
      expect(await introspect(t, rs, tokens.refresh_token)).toEqual({ active: false })
      const res = await refresh(tokens.refresh_token)
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_grant')
    }
    expect(await t.services.grants.findLiveGrant(party.userId, party.client.id)).toBeUndefined()
  }
})
