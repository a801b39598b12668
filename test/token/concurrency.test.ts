import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFRESH_RETRY_ANSWERS } from '../../src/grants/refresh-token.repository.js'
import { sha256 } from '../../src/lib/secrets.js'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import {
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  type TokenBody,
} from '../helpers/fixtures.js'
import { expectInvariants, rowsOfUser } from '../helpers/invariants.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
} from '../helpers/tokens.js'

// On PostgreSQL these race for real (a pool of connections, real HTTP); on PGlite they serialise,
// which still checks the outcome.
let t: TestApp
let party: Party
let base: string
let rs: ResourceServerCredentials
/** A second instance over the same database with REFRESH_REUSE_WINDOW=0: the behaviour before it. */
let noWindow: TestApp
let noWindowBase: string
beforeAll(async () => {
  t = await buildTestApp()
  party = await createParty(t)
  rs = await createResourceServer(t)
  base = await t.app.listen({ port: 0, host: '127.0.0.1' })
  noWindow = await buildTestApp({ database: t.database, env: { REFRESH_REUSE_WINDOW: '0' } })
  noWindowBase = await noWindow.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await noWindow.close()
  await t.close()
})

function post(params: Record<string, string>, at = base) {
  return fetch(`${at}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  })
}

describe(`concurrent token requests (${testEngine()})`, () => {
  it('of 20 simultaneous refreshes of one token inside the retry window, 1 + REFRESH_RETRY_ANSWERS succeed, all with one successor; no branch, no revocation', async () => {
    const first = await exchangeCode(t, party)
    const familyId = jwtClaims(first.access_token).family_id as string
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: party.client.id }),
      ),
    )
    const bodies = await Promise.all(answers.map(async (a) => ({ status: a.status, body: await a.json() })))
    const won = bodies.filter((b) => b.status === 200).map((b) => b.body as TokenBody)
    const lost = bodies.filter((b) => b.status !== 200)
    // One rotation and the bounded retries: the bound holds however the requests interleave.
    expect(won).toHaveLength(1 + REFRESH_RETRY_ANSWERS)
    expect(lost.map((b) => [b.status, (b.body as { error: string }).error])).toEqual(
      Array(20 - won.length).fill([400, 'invalid_grant']),
    )
    // One family, not revoked: the spent token and its one successor, whatever the interleaving.
    const family = await t.database.db
      .selectFrom('refresh_families')
      .select(['revoked_at'])
      .where('id', '=', familyId)
      .executeTakeFirstOrThrow()
    expect(family.revoked_at).toBeNull()
    const tokens = await t.database.db
      .selectFrom('refresh_tokens')
      .select(['token_hash', 'rotated_at', 'window_answers'])
      .where('family_id', '=', familyId)
      .execute()
    expect(tokens).toHaveLength(2)
    const spent = tokens.find((r) => r.token_hash === sha256(first.refresh_token))!
    expect(spent).toMatchObject({ window_answers: REFRESH_RETRY_ANSWERS })
    expect(spent.rotated_at).not.toBeNull()
    const successors = new Set(won.map((w) => w.refresh_token))
    expect(successors.size).toBe(1)
    expect(tokens.find((r) => r.token_hash !== spent.token_hash)?.token_hash).toBe(
      sha256([...successors][0]!),
    )
    await expectInvariants(t.database.db)
    // Every answer works: its own access token introspects active; the one successor rotates on, and
    // the same 20 at once on it again give one rotation and its retries, all with one successor.
    for (const answer of won) {
      expect(jwtClaims(answer.access_token).family_id).toBe(familyId)
      expect((await introspect(t, rs, answer.access_token)).active).toBe(true)
    }
    expect(new Set(won.map((w) => w.access_token)).size).toBe(won.length)
    const next = await Promise.all(
      Array.from({ length: 20 }, () =>
        post({
          grant_type: 'refresh_token',
          refresh_token: won[0]!.refresh_token,
          client_id: party.client.id,
        }),
      ),
    )
    const nextWon = (
      await Promise.all(next.filter((n) => n.status === 200).map((n) => n.json() as Promise<TokenBody>))
    ).map((b) => b.refresh_token)
    expect(nextWon).toHaveLength(1 + REFRESH_RETRY_ANSWERS)
    expect(new Set(nextWon).size).toBe(1)
    await expectInvariants(t.database.db)
  })

  it('REFRESH_REUSE_WINDOW=0: of 20 simultaneous refreshes of one token exactly one succeeds', async () => {
    const first = await exchangeCode(noWindow, party)
    const familyId = jwtClaims(first.access_token).family_id as string
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(
          { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: party.client.id },
          noWindowBase,
        ),
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
    await expectInvariants(t.database.db)
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
    const code = await t.database.db
      .selectFrom('authorization_codes')
      .select(['consumed_at', 'family_id'])
      .where('code_hash', '=', sha256(minted.code))
      .executeTakeFirstOrThrow()
    expect(code.consumed_at).not.toBeNull()
    expect(code.family_id).toBe(families[0]!.id)
    await expectInvariants(t.database.db)
  })

  it('refreshes distinct families in parallel without interfering', async () => {
    const starts = await Promise.all(Array.from({ length: 10 }, () => exchangeCode(t, party)))
    const answers = await Promise.all(
      starts.map((s) =>
        post({ grant_type: 'refresh_token', refresh_token: s.refresh_token, client_id: party.client.id }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200))
    await expectInvariants(t.database.db)
  })
})

describe(`deleting a user while tokens are issued (${testEngine()})`, () => {
  /**
   * DELETE /admin/users/:id racing a code exchange and a refresh of the same user. Whichever wins,
   * once all three have answered nothing of the user is left (ON DELETE CASCADE), no request was
   * a 5xx, and whatever tokens were handed out are dead: they neither introspect active nor refresh.
   */
  it('leaves no row and no usable token of the user, whatever the order', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 30; round++) {
      const victim = await createParty(t)
      const first = await exchangeCode(t, victim)
      const minted = await mintCode(t, victim)
      // A grant last used over a minute ago: the exchange and the refresh also write its row.
      await t.database.db
        .updateTable('grants')
        .set({ last_used_at: null })
        .where('id', '=', victim.grant.id)
        .execute()
      const [deleted, exchanged, refreshed] = await Promise.all([
        t.admin.inject({ method: 'DELETE', url: `/admin/users/${victim.userId}`, headers: adminHeaders }),
        post({ code: minted.code, code_verifier: minted.verifier, client_id: victim.client.id }),
        post({
          grant_type: 'refresh_token',
          refresh_token: first.refresh_token,
          client_id: victim.client.id,
        }),
      ])
      expect(deleted.statusCode, deleted.body).toBe(204)
      const issued: TokenBody[] = [first]
      for (const answer of [exchanged, refreshed]) {
        const body = (await answer.json()) as TokenBody & { error?: string }
        expect([200, 400], JSON.stringify(body)).toContain(answer.status)
        if (answer.status === 200) issued.push(body)
        else expect(body.error).toBe('invalid_grant')
      }
      expect(await rowsOfUser(t.database.db, victim.userId)).toEqual({
        users: 0,
        sign_in_sessions: 0,
        grants: 0,
        authorization_codes: 0,
        refresh_families: 0,
        refresh_tokens: 0,
      })
      for (const tokens of issued) {
        expect(await introspect(t, rs, tokens.access_token)).toEqual({ active: false })
        expect(await refreshTokenIsLive(t, tokens.refresh_token)).toBe(false)
        const again = await post({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: victim.client.id,
        })
        expect(again.status).toBe(400)
      }
      await expectInvariants(t.database.db)
    }
  })
})
