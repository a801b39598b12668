import { calculateJwkThumbprint } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFRESH_RETRY_ANSWERS } from '../../src/grants/refresh-token.repository.js'
import { createRefreshTokenService } from '../../src/grants/refresh-token.service.js'
import { sha256 } from '../../src/lib/secrets.js'
import { createSecretSeal } from '../../src/tokens/key-encryption.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import type { TestClock } from '../helpers/clock.js'
import { dpopKey, type DpopKey, dpopProof } from '../helpers/dpop.js'
import {
  appWithParty,
  createParty,
  exchangeCode,
  jwtClaims,
  mintCode,
  type Party,
  type TokenBody,
  tokenRequest,
} from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import {
  createResourceServer,
  introspect,
  refreshTokenIsLive,
  type ResourceServerCredentials,
  revokeRequest,
} from '../helpers/tokens.js'

/**
 * REFRESH_REUSE_WINDOW (default 10 s): a spent refresh token presented again by its own client soon
 * after it rotated is a retry (a lost response, two tabs, an app woken twice), answered with a fresh
 * access token and the SAME successor refresh token its rotation issued, at most
 * REFRESH_RETRY_ANSWERS times: the family never branches (test/token/refresh-lineage.test.ts tells
 * the thief's story). After the window it is theft, as before: the family is revoked. The test clock
 * moves past the window; nothing sleeps.
 */
const WINDOW = 10
let t: TestApp
let clock: TestClock
let party: Party
let rs: ResourceServerCredentials
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
  rs = await createResourceServer(t)
})
afterAll(async () => t?.close())

function refresh(token: string, extra: Record<string, string> = {}, app = t, p = party) {
  return tokenRequest(app, {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: p.client.id,
    ...extra,
  })
}

async function refreshed(token: string, extra: Record<string, string> = {}): Promise<TokenBody> {
  const res = await refresh(token, extra)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

function expectInvalidGrant(res: Awaited<ReturnType<typeof refresh>>, description?: RegExp) {
  expect(res.statusCode, res.body).toBe(400)
  expect(res.json().error).toBe('invalid_grant')
  if (description) expect(res.json().error_description).toMatch(description)
}

const familyOf = (tokens: TokenBody) => jwtClaims(tokens.access_token).family_id as string

function family(id: string) {
  return t.database.db
    .selectFrom('refresh_families')
    .select(['revoked_at', 'revoked_reason'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
}

async function windowAnswers(token: string): Promise<number> {
  const row = await t.database.db
    .selectFrom('refresh_tokens')
    .select('window_answers')
    .where('token_hash', '=', sha256(token))
    .executeTakeFirstOrThrow()
  return row.window_answers
}

/** Every token of the list is dead: refresh refused, introspection inactive for both kinds. */
async function expectDead(answers: TokenBody[]) {
  for (const a of answers) {
    expect(await introspect(t, rs, a.access_token)).toEqual({ active: false })
    expect(await refreshTokenIsLive(t, a.refresh_token)).toBe(false)
  }
  for (const a of answers) expectInvalidGrant(await refresh(a.refresh_token))
}

describe('the refresh retry window', () => {
  it('is on by default for 10 seconds', () => {
    expect(t.config.refreshReuseWindow).toBe(WINDOW)
  })

  it('a lost response: the spent token presented again gets the same refresh token, a new access token', async () => {
    const start = await exchangeCode(t, party)
    const lost = await refreshed(start.refresh_token) // the client never saw this answer
    clock.advance(2)
    const retry = await refreshed(start.refresh_token)
    expect(retry).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'links:read links:write' })
    expect(retry.refresh_token).toBe(lost.refresh_token)
    expect(retry.access_token).not.toBe(lost.access_token)
    expect(jwtClaims(retry.access_token)).toMatchObject({
      family_id: familyOf(start),
      grant_id: party.grant.id,
      sub: party.userId,
    })
    expect((await family(familyOf(start))).revoked_at).toBeNull()
    expect(await windowAnswers(start.refresh_token)).toBe(1)
    // The one successor rotates on; the spent one stays not live.
    expect((await introspect(t, rs, retry.access_token)).active).toBe(true)
    expect(await refreshTokenIsLive(t, start.refresh_token)).toBe(false)
    await refreshed(retry.refresh_token)
    await expectInvariants(t.database.db)
  })

  it('keeps a narrower scope asked in the retry, and refuses a wider one without revoking', async () => {
    const start = await exchangeCode(t, party)
    await refreshed(start.refresh_token)
    const narrow = await refreshed(start.refresh_token, { scope: 'links:read' })
    expect(narrow.scope).toBe('links:read')
    const wider = await refresh(start.refresh_token, { scope: 'links:read products:sync' })
    expect(wider.json().error).toBe('invalid_scope')
    expect((await family(familyOf(start))).revoked_at).toBeNull()
  })

  it('answers 1 s before the window ends; at its end the spent token revokes the family, every branch', async () => {
    const start = await exchangeCode(t, party)
    const first = await refreshed(start.refresh_token)
    clock.advance(WINDOW - 1)
    const retry = await refreshed(start.refresh_token)
    const branchNext = await refreshed(retry.refresh_token) // a branch that moved on
    clock.advance(1)
    expectInvalidGrant(
      await refresh(start.refresh_token),
      /already been used; its token family is now revoked/,
    )
    expect(await family(familyOf(start))).toEqual({
      revoked_at: clock.now(),
      revoked_reason: 'refresh_token_reuse',
    })
    await expectDead([first, retry, branchNext])
    await expectInvariants(t.database.db)
  })

  it('a spent answer of a branch, presented after its window, revokes the whole family too', async () => {
    const start = await exchangeCode(t, party)
    const first = await refreshed(start.refresh_token)
    const retry = await refreshed(start.refresh_token)
    const retryNext = await refreshed(retry.refresh_token)
    clock.advance(WINDOW)
    expectInvalidGrant(await refresh(retry.refresh_token))
    expect((await family(familyOf(start))).revoked_reason).toBe('refresh_token_reuse')
    await expectDead([first, retryNext])
  })

  it(`gives at most ${REFRESH_RETRY_ANSWERS} answers per spent token; past the bound invalid_grant without revoking`, async () => {
    const start = await exchangeCode(t, party)
    const answers = [await refreshed(start.refresh_token)]
    for (let i = 0; i < REFRESH_RETRY_ANSWERS; i++) answers.push(await refreshed(start.refresh_token))
    expectInvalidGrant(await refresh(start.refresh_token), /use the refresh token of an earlier answer/)
    expectInvalidGrant(await refresh(start.refresh_token))
    expect(await windowAnswers(start.refresh_token)).toBe(REFRESH_RETRY_ANSWERS)
    expect((await family(familyOf(start))).revoked_at).toBeNull()
    await expectInvariants(t.database.db)
    // Every answer carries the one successor: its rotation, then its own retries, one lineage.
    expect(new Set(answers.map((a) => a.refresh_token)).size).toBe(1)
    const next = []
    for (const a of answers) next.push(await refreshed(a.refresh_token))
    expect(new Set(next.map((a) => a.refresh_token)).size).toBe(1)
    // After the window the spent token is theft again: all of it goes.
    clock.advance(WINDOW)
    expectInvalidGrant(await refresh(start.refresh_token))
    expect((await family(familyOf(start))).revoked_reason).toBe('refresh_token_reuse')
    await expectDead(next)
    await expectInvariants(t.database.db)
  })

  it('a DPoP-bound token stays bound in the window: no proof or another key is refused, nothing revoked', async () => {
    const key = await dpopKey()
    const thief = await dpopKey()
    const proof = (k: DpopKey) => dpopProof(k, { issuer: t.config.issuer, now: clock.now() })
    const { code, verifier } = await mintCode(t, party)
    const bound = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof(key) },
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.client.id,
      }).toString(),
    })
    expect(bound.statusCode, bound.body).toBe(200)
    const start = bound.json() as TokenBody
    const withProof = async (k: DpopKey | undefined) =>
      t.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(k ? { dpop: await proof(k) } : {}),
        },
        payload: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: start.refresh_token,
          client_id: party.client.id,
        }).toString(),
      })
    expect((await withProof(key)).statusCode).toBe(200) // the rotation: start is now spent
    clock.advance(1)
    // Inside the window, the spent token without its key is no retry: refused, and nothing is revoked
    // (a thief holding the token alone cannot end the user's session either).
    for (const k of [undefined, thief]) {
      const res = await withProof(k)
      expectInvalidGrant(res)
      expect((await family(familyOf(start))).revoked_at).toBeNull()
    }
    expect(await windowAnswers(start.refresh_token)).toBe(0)
    // With its key, the retry is answered: a DPoP token bound to the same key, its refresh token too.
    const retry = await withProof(key)
    expect(retry.statusCode, retry.body).toBe(200)
    const answer = retry.json() as TokenBody
    expect(answer.token_type).toBe('DPoP')
    expect(jwtClaims(answer.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(key.jwk) })
    expect(await windowAnswers(start.refresh_token)).toBe(1)
    const next = await t.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: answer.refresh_token,
        client_id: party.client.id,
      }).toString(),
    })
    expectInvalidGrant(next)
    await expectInvariants(t.database.db)
  })

  it('never helps another client: the token has leaked, its family is revoked, no answer counted', async () => {
    const other = await createParty(t)
    const start = await exchangeCode(t, party)
    const first = await refreshed(start.refresh_token)
    expectInvalidGrant(await refresh(start.refresh_token, {}, t, other), /^The refresh token is invalid\.$/)
    expect(await windowAnswers(start.refresh_token)).toBe(0)
    expect((await family(familyOf(start))).revoked_reason).toBe('refresh_token_other_client')
    expectInvalidGrant(await refresh(first.refresh_token))
  })

  it('never helps a revoked grant, nor a disabled client', async () => {
    const p = await createParty(t)
    const start = await exchangeCode(t, p)
    await refreshed(start.refresh_token, { client_id: p.client.id })
    await t.services.grants.revokeForUser(p.userId, p.client.id)
    expectInvalidGrant(await refresh(start.refresh_token, {}, t, p))

    const q = await createParty(t)
    const qStart = await exchangeCode(t, q)
    await refreshed(qStart.refresh_token, { client_id: q.client.id })
    await t.services.clients.disableClient(q.client.id)
    const disabled = await refresh(qStart.refresh_token, {}, t, q)
    expect({ status: disabled.statusCode, error: disabled.json().error }).toEqual({
      status: 401,
      error: 'invalid_client',
    })
    expect(await windowAnswers(start.refresh_token)).toBe(0)
    expect(await windowAnswers(qStart.refresh_token)).toBe(0)
  })

  it('never helps once the family is revoked (RFC 7009 of a branch revokes every branch)', async () => {
    const start = await exchangeCode(t, party)
    const first = await refreshed(start.refresh_token)
    const retry = await refreshed(start.refresh_token)
    const revoked = await revokeRequest(t, { token: retry.refresh_token, client_id: party.client.id })
    expect(revoked.statusCode).toBe(200)
    expect((await family(familyOf(start))).revoked_reason).toBe('revoked_by_client')
    expectInvalidGrant(await refresh(start.refresh_token), /has been revoked/)
    expect(await windowAnswers(start.refresh_token)).toBe(1)
    await expectDead([first, retry])
  })

  it('never helps once the family’s absolute lifetime has passed', async () => {
    const start = await exchangeCode(t, party)
    // A family 3 s from its end, as REFRESH_TOKEN_ABSOLUTE_TTL leaves it (its token capped too).
    const end = new Date(clock.now().getTime() + 3000)
    await t.database.db
      .updateTable('refresh_families')
      .set({ expires_at: end })
      .where('id', '=', familyOf(start))
      .execute()
    await t.database.db
      .updateTable('refresh_tokens')
      .set({ expires_at: end })
      .where('family_id', '=', familyOf(start))
      .execute()
    await refreshed(start.refresh_token)
    clock.advance(3)
    expectInvalidGrant(await refresh(start.refresh_token), /has expired/)
    expect(await windowAnswers(start.refresh_token)).toBe(0)
  })

  it('an unrotated token is live; a spent one inside the window is not', async () => {
    const start = await exchangeCode(t, party)
    expect(await refreshTokenIsLive(t, start.refresh_token)).toBe(true)
    const first = await refreshed(start.refresh_token)
    expect(await refreshTokenIsLive(t, start.refresh_token)).toBe(false)
    const retry = await refreshed(start.refresh_token)
    expect(await refreshTokenIsLive(t, start.refresh_token)).toBe(false)
    for (const answer of [first, retry]) expect(await refreshTokenIsLive(t, answer.refresh_token)).toBe(true)
  })
})

describe('REFRESH_REUSE_WINDOW=0', () => {
  let off: TestApp
  beforeAll(async () => {
    off = await buildTestApp({ clock, database: t.database, env: { REFRESH_REUSE_WINDOW: '0' } })
  })
  afterAll(async () => {
    await off.close()
  })

  it('is today’s rule exactly: the spent token presented again at once revokes the family', async () => {
    expect(off.config.refreshReuseWindow).toBe(0)
    const start = await exchangeCode(off, party)
    const first = (await refresh(start.refresh_token, {}, off)).json() as TokenBody
    expectInvalidGrant(await refresh(start.refresh_token, {}, off), /its token family is now revoked/)
    expect(await family(familyOf(start))).toEqual({
      revoked_at: clock.now(),
      revoked_reason: 'refresh_token_reuse',
    })
    expect(await windowAnswers(start.refresh_token)).toBe(0)
    await expectDead([first])
    await expectInvariants(t.database.db)
  })
})

describe('round trips to the database', () => {
  it('one statement for a rotation and for each retry; a refusal reads the token once more', async () => {
    // The refresh-token service over the same database, counting every statement it sends.
    let statements = 0
    const counted = t.database.db.withPlugin({
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        statements++
        return result
      },
    })
    const service = createRefreshTokenService(
      counted,
      clock,
      t.config,
      {},
      undefined,
      createSecretSeal(t.services.signingKeys.keyEncryptionRing),
    )
    const start = await exchangeCode(t, party)
    const count = async (token: string) => {
      statements = 0
      await service
        .rotateRefreshToken({ refreshToken: token, clientId: party.client.id })
        .catch(() => undefined)
      return statements
    }
    expect(await count(start.refresh_token)).toBe(1) // the first rotation: the one statement, as before
    for (let i = 0; i < REFRESH_RETRY_ANSWERS; i++) expect(await count(start.refresh_token)).toBe(1)
    expect(await count(start.refresh_token)).toBe(2) // past the bound: the statement, then why not
    clock.advance(WINDOW)
    expect(await count(start.refresh_token)).toBe(3) // reuse: the statement, why not, the revocation
    expect((await family(familyOf(start))).revoked_reason).toBe('refresh_token_reuse')
  })
})
