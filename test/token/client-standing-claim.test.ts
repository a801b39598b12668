import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Standing } from '../../src/clients/standing.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import type { StandingOverride } from '../../src/db/database.js'
import { buildTestApp, GENEROUS_LIMITS, type TestApp } from '../helpers/app.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  tokenRequest,
} from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Issue 37 part 4: every access token carries the app's standing (the private claim
 * `client_standing`), read by the issuing statements themselves (code exchange and refresh), and
 * introspection answers it. The operator's decision (clients.standing_override) wins over the kind.
 */

let t: TestApp
let rs: ResourceServerCredentials
beforeAll(async () => {
  t = await buildTestApp({ env: GENEROUS_LIMITS })
  rs = await createResourceServer(t)
})
afterAll(async () => {
  await t?.close()
})

async function setClient(
  clientId: string,
  facts: { kind?: 'registered' | 'metadata_document' | 'dynamic'; override?: StandingOverride | null },
) {
  await t.database.db
    .updateTable('clients')
    .set({
      ...(facts.kind ? { kind: facts.kind } : {}),
      ...(facts.override !== undefined ? { standing_override: facts.override } : {}),
    })
    .where('id', '=', clientId)
    .execute()
}

async function refresh(party: Party, refreshToken: string) {
  const res = await tokenRequest(t, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: party.client.id,
  })
  expect(res.statusCode).toBe(200)
  return res.json<{ access_token: string; refresh_token: string }>()
}

describe('client_standing in access tokens', () => {
  it.each<[string, 'registered' | 'metadata_document' | 'dynamic', StandingOverride | null, Standing]>([
    ['an operator-registered app', 'registered', null, 'verified'],
    ['a metadata-document app (its host vouches)', 'metadata_document', null, 'vouched'],
    ['a self-registered app', 'dynamic', null, 'unverified'],
    ['a self-registered app the operator verified', 'dynamic', 'verified', 'verified'],
    ['a registered app whose standing the operator took away', 'registered', 'unverified', 'unverified'],
  ])(
    '%s (kind %s, override %s): exchange, refresh and introspection say %s',
    async (_label, kind, override, standing) => {
      const party = await createParty(t)
      await setClient(party.client.id, { kind, override })
      const exchanged = await exchangeCode(t, party)
      expect(jwtClaims(exchanged.access_token).client_standing).toBe(standing)
      const refreshed = await refresh(party, exchanged.refresh_token)
      expect(jwtClaims(refreshed.access_token).client_standing).toBe(standing)
      expect((await introspect(t, rs, refreshed.access_token)).client_standing).toBe(standing)
    },
  )

  it('follows the operator at the next refresh: a standing taken away is in the next token', async () => {
    const party = await createParty(t)
    const exchanged = await exchangeCode(t, party)
    expect(jwtClaims(exchanged.access_token).client_standing).toBe('verified')
    await setClient(party.client.id, { override: 'unverified' })
    const refreshed = await refresh(party, exchanged.refresh_token)
    expect(jwtClaims(refreshed.access_token).client_standing).toBe('unverified')
  })

  it('a client that registered itself (RFC 7591) gets unverified tokens, and introspection says so', async () => {
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/register',
      headers: { 'content-type': 'application/json' },
      payload: {
        client_name: 'Self Registered',
        redirect_uris: ['https://self.example/cb'],
        scope: 'links:read',
      },
    })
    expect(registered.statusCode).toBe(201)
    const clientId = registered.json<{ client_id: string }>().client_id
    const base = await createParty(t)
    const grant = await upsertGrant(
      t.database.db,
      { userId: base.userId, clientId, scopes: ['links:read'] },
      t.clock.now(),
    )
    const client = await t.services.clients.getClient(clientId)
    const party: Party = { userId: base.userId, client, grant }
    const { code, verifier } = await mintCode(t, party)
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
    })
    expect(res.statusCode).toBe(200)
    const token = res.json<{ access_token: string }>().access_token
    expect(jwtClaims(token).client_standing).toBe('unverified')
    const answer = await introspect(t, rs, token)
    expect(answer).toMatchObject({ active: true, client_id: clientId, client_standing: 'unverified' })
  })
})
