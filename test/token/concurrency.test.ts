import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import { createParty, exchangeCode, jwtClaims, mintCode, type Party } from '../helpers/fixtures.js'

// On PostgreSQL these race for real (a pool of connections, real HTTP); on PGlite they serialise,
// which still checks the outcome.
let t: TestApp
let party: Party
let base: string
beforeAll(async () => {
  t = await buildTestApp()
  party = await createParty(t)
  base = await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await t.close()
})

function post(params: Record<string, string>) {
  return fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  })
}

describe(`concurrent token requests (${testEngine()})`, () => {
  it('of 20 simultaneous refreshes of one token exactly one succeeds', async () => {
    const first = await exchangeCode(t, party)
    const familyId = jwtClaims(first.access_token).family_id as string
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: party.client.id }),
      ),
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 400)).toHaveLength(19)
    for (const a of answers.filter((x) => x.status === 400))
      expect(((await a.json()) as { error: string }).error).toBe('invalid_grant')

    const tokens = await t.database.db
      .selectFrom('refresh_tokens')
      .select(['token_hash', 'rotated_at'])
      .where('family_id', '=', familyId)
      .execute()
    expect(tokens).toHaveLength(2) // the presented one, rotated, and exactly one successor
    expect(tokens.find((r) => r.token_hash === sha256(first.refresh_token))!.rotated_at).not.toBeNull()
    // The losers presented a rotated token: by the reuse rule the family is revoked.
    const family = await t.database.db
      .selectFrom('refresh_families')
      .selectAll()
      .where('id', '=', familyId)
      .executeTakeFirstOrThrow()
    expect(family.revoked_reason).toBe('refresh_token_reuse')
  })

  it('of 10 simultaneous redemptions of one code exactly one succeeds', async () => {
    const minted = await mintCode(t, party)
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        post({ code: minted.code, code_verifier: minted.verifier, client_id: party.client.id }),
      ),
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 400)).toHaveLength(9)
    const families = await t.database.db
      .selectFrom('authorization_codes as c')
      .innerJoin('refresh_families as f', 'f.id', 'c.family_id')
      .select(['f.id', 'f.revoked_reason'])
      .where('c.code_hash', '=', sha256(minted.code))
      .execute()
    expect(families).toHaveLength(1)
    const count = await t.database.db
      .selectFrom('refresh_tokens')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('family_id', '=', families[0]!.id)
      .executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(1)
    // The other nine were replays of a used code.
    expect(families[0]!.revoked_reason).toBe('code_replay')
  })

  it('refreshes distinct families in parallel without interfering', async () => {
    const starts = await Promise.all(Array.from({ length: 10 }, () => exchangeCode(t, party)))
    const answers = await Promise.all(
      starts.map((s) =>
        post({ grant_type: 'refresh_token', refresh_token: s.refresh_token, client_id: party.client.id }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
  })
})
