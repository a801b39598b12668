import type { CompiledQuery, Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batchedWrite } from '../../src/db/batched-write.js'
import { createRefreshTokenService } from '../../src/grants/refresh-token.service.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { createGrantService } from '../../src/grants/grant.service.js'
import { insertSession } from '../../src/accounts/session.repository.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import { createParty, exchangeCode, jwtClaims, mintCode, type Party } from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import { refreshTokenIsLive } from '../helpers/tokens.js'

/**
 * Concurrent rotations of distinct refresh tokens share one statement (batchedWrite, issue 29); each
 * still gets exactly the answer it would have had alone.
 */
describe('batchedWrite', () => {
  /** A statement over a list, as the real ones: a list holding 'bad' fails whole, written nothing. */
  const recorder = () => {
    const calls: string[][] = []
    return {
      calls,
      write: batchedWrite({
        many: async (xs: string[]) => {
          calls.push([...xs])
          if (xs.includes('bad'))
            throw new Error(xs.length === 1 ? 'refused: bad' : 'a batch with bad fails whole')
          return xs.map((x) => `done:${x}`)
        },
        key: (x) => x.replace(/#.*/, ''),
      }),
    }
  }

  it('sends what one turn of the loop asks for as one batch, sorted by key; alone, a list of one', async () => {
    const r = recorder()
    expect(await Promise.all(['c', 'a', 'b'].map(r.write))).toEqual(['done:c', 'done:a', 'done:b'])
    expect(r.calls).toEqual([['a', 'b', 'c']])
    expect(await r.write('d')).toBe('done:d')
    expect(r.calls.at(-1)).toEqual(['d'])
  })

  it('never puts one key twice in a batch', async () => {
    const r = recorder()
    await Promise.all(['a#1', 'b', 'a#2', 'a#3'].map(r.write))
    expect(r.calls.map((c) => c.map((x) => x.replace(/#.*/, '')))).toEqual([['a', 'b'], ['a'], ['a']])
  })

  it('when the batch fails, each input runs alone and only the failing one fails', async () => {
    const r = recorder()
    const settled = await Promise.allSettled(['a', 'bad', 'c'].map(r.write))
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      'done:a',
      'refused: bad',
      'done:c',
    ])
    expect(r.calls).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']])
  })

  it('takes an answer of another length than its list as a failure, in a batch and alone', async () => {
    const calls: string[][] = []
    const write = batchedWrite({
      many: async (xs: string[]) => {
        calls.push([...xs])
        return xs.slice(1)
      },
      key: (x) => x,
    })
    const settled = await Promise.allSettled(['a', 'b'].map(write))
    expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value))).toEqual([
      'batchedWrite: 0 answers for 1 inputs',
      'batchedWrite: 0 answers for 1 inputs',
    ])
    expect(calls).toEqual([['a', 'b'], ['a'], ['b']])
  })

  it('holds what is asked for while a round is out, and sends it as one batch when the round ends', async () => {
    const calls: string[][] = []
    const gates: (() => void)[] = []
    const write = batchedWrite({
      many: async (xs: string[]) => {
        calls.push([...xs])
        await new Promise<void>((open) => gates.push(open))
        return xs.map((x) => `done:${x}`)
      },
      key: (x) => x,
    })
    const first = write('a')
    await new Promise((r) => setImmediate(r))
    expect(calls).toEqual([['a']])
    // Asked for in three later turns of the loop, while 'a' is still out: none of them leaves yet.
    const later: Promise<string>[] = []
    for (const x of ['d', 'b', 'c']) {
      later.push(write(x))
      await new Promise((r) => setImmediate(r))
    }
    expect(calls).toEqual([['a']])
    gates.shift()!()
    expect(await first).toBe('done:a')
    for (let turn = 0; turn < 3 && calls.length < 2; turn++) await new Promise((r) => setImmediate(r))
    expect(calls).toEqual([['a'], ['b', 'c', 'd']])
    gates.shift()!()
    expect(await Promise.all(later)).toEqual(['done:d', 'done:b', 'done:c'])
  })

  it('lets maxInFlight rounds out at once', async () => {
    const calls: string[][] = []
    const gates: (() => void)[] = []
    const write = batchedWrite({
      many: async (xs: string[]) => {
        calls.push([...xs])
        await new Promise<void>((open) => gates.push(open))
        return xs
      },
      key: (x) => x,
      maxInFlight: 2,
    })
    const all = [write('a')]
    await new Promise((r) => setImmediate(r))
    all.push(write('b'))
    await new Promise((r) => setImmediate(r))
    all.push(write('c'))
    await new Promise((r) => setImmediate(r))
    expect(calls).toEqual([['a'], ['b']])
    while (gates.length > 0 || calls.length < 3) {
      gates.shift()?.()
      await new Promise((r) => setImmediate(r))
    }
    expect(await Promise.all(all)).toEqual(['a', 'b', 'c'])
    expect(calls).toEqual([['a'], ['b'], ['c']])
  })
})

describe(`token requests in one statement (${testEngine()})`, () => {
  let t: TestApp
  let party: Party
  let rotationStatements = 0
  let redemptionStatements = 0
  let authorizeStatements = 0
  /** The app's database handle, counting the rotation statements it runs (prepared: executeQuery). */
  const counted = (db: Kysely<Database>): Kysely<Database> =>
    new Proxy(db, {
      get(target, name, receiver) {
        if (name !== 'executeQuery') {
          const value = Reflect.get(target, name, receiver) as unknown
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value
        }
        return (query: CompiledQuery) => {
          if (query.sql.includes('update refresh_tokens as t')) rotationStatements++
          if (query.sql.includes('update authorization_codes as c')) redemptionStatements++
          if (query.sql.includes('join sign_in_sessions as s')) authorizeStatements++
          return target.executeQuery(query)
        }
      },
    })
  beforeAll(async () => {
    t = await buildTestApp()
    party = await createParty(t)
  })
  afterAll(async () => t.close())

  it('rotates 12 families at once with one statement, each answer its own; a revoked one among them is refused alone', async () => {
    const issued = await Promise.all(Array.from({ length: 12 }, () => exchangeCode(t, party)))
    // One family is revoked by its client before the batch: the statement must refuse it, and only it.
    const revoked = issued[5]!
    expect(
      await t.services.refreshTokens.revokeRefreshTokenFamily(revoked.refresh_token, party.client.id),
    ).toBe(true)
    const service = createRefreshTokenService(counted(t.database.db), t.clock, t.config)
    rotationStatements = 0
    const settled = await Promise.allSettled(
      issued.map((i) =>
        service.rotateRefreshToken({ refreshToken: i.refresh_token, clientId: party.client.id }),
      ),
    )
    // The eleven live ones in one statement; the refused one's slow path reads, it does not rotate.
    expect(rotationStatements).toBe(1)
    settled.forEach((s, i) => {
      if (i === 5) {
        expect(s.status).toBe('rejected')
        expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_grant' })
        return
      }
      expect(s.status).toBe('fulfilled')
      const answer = (s as PromiseFulfilledResult<{ familyId: string; refreshToken: string }>).value
      expect(answer.familyId).toBe(jwtClaims(issued[i]!.access_token).family_id)
    })
    const successors = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.refreshToken] : []))
    expect(new Set(successors).size).toBe(11)
    for (const token of successors) expect(await refreshTokenIsLive(t, token)).toBe(true)
    for (const i of issued) {
      const spent = await t.database.db
        .selectFrom('refresh_tokens')
        .select('rotated_at')
        .where('token_hash', '=', sha256(i.refresh_token))
        .executeTakeFirstOrThrow()
      expect(spent.rotated_at === null).toBe(i === revoked)
    }
    await expectInvariants(t.database.db)
  })

  it('redeems 12 codes at once with one statement; a wrong verifier and an unknown code among them are refused alone', async () => {
    const minted = await Promise.all(Array.from({ length: 12 }, () => mintCode(t, party)))
    const grants = createGrantService(counted(t.database.db), t.clock, t.config)
    redemptionStatements = 0
    const settled = await Promise.allSettled(
      minted.map((m, i) =>
        grants.redeemAuthorizationCode({
          code: i === 11 ? randomToken() : m.code,
          codeVerifier: i === 4 ? randomToken(48) : m.verifier,
          clientId: party.client.id,
        }),
      ),
    )
    // The batch, then nothing else of its kind: the refusals' slow paths read, they do not redeem.
    expect(redemptionStatements).toBe(1)
    const families = new Set<string>()
    settled.forEach((s, i) => {
      if (i === 4 || i === 11) {
        expect(s.status).toBe('rejected')
        expect((s as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_grant' })
        return
      }
      expect(s.status).toBe('fulfilled')
      families.add((s as PromiseFulfilledResult<{ familyId: string }>).value.familyId)
    })
    expect(families.size).toBe(10)
    // Every minted code is consumed (the wrong verifier burns its code, as alone), and only the ten
    // good ones started a family.
    const codes = await t.database.db
      .selectFrom('authorization_codes')
      .select(['code_hash', 'consumed_at', 'family_id'])
      .where(
        'code_hash',
        'in',
        minted.slice(0, 11).map((m) => sha256(m.code)),
      )
      .execute()
    expect(codes.filter((c) => c.consumed_at !== null)).toHaveLength(11)
    expect(codes.filter((c) => c.family_id !== null)).toHaveLength(10)
    await expectInvariants(t.database.db)
  })

  it("issues 10 returning users' codes at once with one statement; an unknown session among them gets none", async () => {
    const token = randomToken()
    const now = t.clock.now()
    await insertSession(t.database.db, {
      tokenHash: sha256(token),
      userId: party.userId,
      csrfSecret: randomToken(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
    })
    const grants = createGrantService(counted(t.database.db), t.clock, t.config)
    authorizeStatements = 0
    const request = {
      clientId: party.client.id,
      redirectUri: party.client.redirectUris[0]!,
      scopes: ['links:read'],
      codeChallenge: s256Challenge(randomToken(48)),
    }
    const issued = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        grants.issueCodeForSession(request, sha256(i === 6 ? randomToken() : token)),
      ),
    )
    expect(authorizeStatements).toBe(1)
    expect(issued[6]).toBeUndefined()
    const codes = issued.filter((c) => c !== undefined)
    expect(codes).toHaveLength(9)
    const stored = await t.database.db
      .selectFrom('authorization_codes')
      .select(['code_hash', 'grant_id', 'scopes'])
      .where(
        'code_hash',
        'in',
        codes.map((c) => sha256(c.code)),
      )
      .execute()
    expect(stored).toHaveLength(9)
    for (const row of stored) expect(row).toMatchObject({ grant_id: party.grant.id, scopes: ['links:read'] })
  })
})
