import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { CHALLENGE } from '../helpers/browser.js'
import { createParty, exchangeCode, mintCode, type TokenBody, tokenRequest } from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

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
      expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
      const res = await refresh(tokens.refresh_token)
      expect(res.statusCode).toBe(400)
      expect(res.json().error).toBe('invalid_grant')
    }
    expect(await t.services.grants.findLiveGrant(party.userId, party.client.id)).toBeUndefined()
    await expectInvariants(t.database.db)
  }
})

/**
 * Revocation racing code exchanges of the same grant: an exchange that wins issues a family the
 * revocation then revokes; one that loses is refused. Either way no family outlives its grant.
 */
it('revoking a grant while its codes are exchanged leaves no live family', { timeout: 120_000 }, async () => {
  for (let round = 0; round < 15; round++) {
    const party = await createParty(t)
    const codes = await Promise.all([1, 2, 3].map(() => mintCode(t, party)))
    // Last used long ago: each exchange also writes the grant's row.
    await t.database.db.updateTable('grants').set({ last_used_at: null }).execute()
    const [, ...exchanged] = await Promise.all([
      t.services.connectedApps.revoke(party.userId, party.client.id),
      ...codes.map((c) =>
        tokenRequest(t, { code: c.code, code_verifier: c.verifier, client_id: party.client.id }),
      ),
    ])
    for (const res of exchanged) {
      expect([200, 400]).toContain(res.statusCode)
      if (res.statusCode !== 200) continue
      const tokens = res.json() as TokenBody
      expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
      expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
    }
    await expectInvariants(t.database.db)
  }
})

/**
 * RFC 7009 revocation of a refresh token racing its own rotation: either the revocation finds the
 * family (and the successor dies with it) or it comes first and the rotation is refused. Never a
 * live successor in a revoked family, never a 5xx.
 */
it('revoking a refresh token while it rotates leaves its family dead', { timeout: 120_000 }, async () => {
  const party = await createParty(t)
  for (let round = 0; round < 15; round++) {
    const first = await exchangeCode(t, party)
    const [revoked, rotated] = await Promise.all([
      revokeRequest(t, { token: first.refresh_token, client_id: party.client.id }),
      tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: party.client.id,
      }),
    ])
    expect(revoked.statusCode).toBe(200)
    expect([200, 400]).toContain(rotated.statusCode)
    const tokens: TokenBody[] = [first, ...(rotated.statusCode === 200 ? [rotated.json() as TokenBody] : [])]
    for (const issued of tokens) {
      expect(await introspect(t, rs, issued.access_token)).toEqual({ active: false })
      expect(await refreshTokenIsLive(t, issued.refresh_token)).toBe(false)
    }
    await expectInvariants(t.database.db)
  }
})

/**
 * Consent racing the operator disabling the client: an Allow either commits before the disable
 * (whose revocation then covers its grant) or finds the client disabled and writes nothing. Either
 * way no live grant of a disabled client is left.
 */
it('disabling a client while users approve it leaves no live grant of it', { timeout: 120_000 }, async () => {
  for (let round = 0; round < 10; round++) {
    const party = await createParty(t)
    await t.services.connectedApps.revoke(party.userId, party.client.id)
    const approvals = [1, 2, 3].map(() =>
      t.services.grants
        .approveAndIssueCode({
          userId: party.userId,
          clientId: party.client.id,
          redirectUri: party.client.redirectUris[0] as string,
          scopes: ['links:read'],
          codeChallenge: CHALLENGE,
        })
        .then(
          () => 'approved',
          (err: { code?: string }) => err.code,
        ),
    )
    const [outcomes] = await Promise.all([
      Promise.all(approvals),
      t.services.clients.disableClient(party.client.id),
    ])
    for (const outcome of outcomes) expect(['approved', 'invalid_client']).toContain(outcome)
    await expectInvariants(t.database.db)
  }
})
