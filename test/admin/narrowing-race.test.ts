import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import { createParty, exchangeCode, type Party } from '../helpers/fixtures.js'
import { createResourceServer, introspect, type ResourceServerCredentials } from '../helpers/tokens.js'

/**
 * Narrowing a client's scopes while its users refresh: on PostgreSQL these race for real (a pool of
 * connections, real HTTP); on PGlite they serialise, which still checks the outcome. Whatever the
 * order, no live family keeps the removed scope, no token issued with it stays active, and every
 * user keeps a refresh token that works with the remaining scope.
 */
let t: TestApp
let base: string
let rs: ResourceServerCredentials
beforeAll(async () => {
  t = await buildTestApp()
  rs = await createResourceServer(t)
  base = await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => t.close())

const refresh = async (clientId: string, token: string) => {
  const res = await fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

describe(`narrowing while refreshing (${testEngine()})`, () => {
  it('leaves every user a working refresh token and no live family with the removed scope', async () => {
    for (let round = 0; round < 8; round++) {
      const party: Party = await createParty(t)
      const users: { userId: string; refreshToken: string }[] = [
        { userId: party.userId, refreshToken: (await exchangeCode(t, party)).refresh_token },
      ]
      for (let i = 0; i < 3; i++) {
        const user = await t.services.users.createUser({
          email: `race-${round}-${i}-${Date.now()}@example.com`,
          password: 'correct horse battery',
        })
        const grant = await upsertGrant(
          t.database.db,
          { userId: user.id, clientId: party.client.id, scopes: ['links:read', 'links:write'] },
          t.clock.now(),
        )
        const tokens = await exchangeCode(t, { ...party, userId: user.id, grant })
        users.push({ userId: user.id, refreshToken: tokens.refresh_token })
      }

      const [patched, ...refreshed] = await Promise.all([
        t.admin.inject({
          method: 'PATCH',
          url: `/admin/clients/${party.client.id}`,
          headers: adminHeaders,
          payload: { scopes: ['links:read'] },
        }),
        ...users.map((u) => refresh(party.client.id, u.refreshToken)),
      ])
      expect(patched.statusCode, patched.body).toBe(200)

      for (const [i, answer] of refreshed.entries()) {
        if (answer.status === 200 && answer.body.scope!.includes('links:write'))
          expect(await introspect(t, rs, answer.body.access_token!)).toEqual({ active: false })
        // The token the app holds now: the new one, or the presented one when the refresh lost the race.
        const held = answer.status === 200 ? answer.body.refresh_token! : users[i]!.refreshToken
        if (answer.status !== 200) expect(answer.body.error).toBe('invalid_grant')
        const next = await refresh(party.client.id, held)
        expect(next.status, JSON.stringify(next.body)).toBe(200)
        expect(next.body.scope).toBe('links:read')
      }

      const wide = await sql<{ n: number }>`
        select count(*)::int as n from refresh_families
         where client_id = ${party.client.id} and revoked_at is null and 'links:write' = any(scopes)`.execute(
        t.database.db,
      )
      expect(wide.rows[0]!.n).toBe(0)
      const unrotated = await sql<{ n: number }>`
        select count(*)::int as n from refresh_tokens t join refresh_families f on f.id = t.family_id
         where f.client_id = ${party.client.id} and f.revoked_at is null and t.rotated_at is null`.execute(
        t.database.db,
      )
      expect(unrotated.rows[0]!.n).toBe(users.length)
    }
  })
})
