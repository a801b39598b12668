import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256 } from '../../src/lib/secrets.js'
import type { TestApp } from '../helpers/app.js'
import type { TestClock } from '../helpers/clock.js'
import {
  appWithParty,
  exchangeCode,
  jwtClaims,
  type Party,
  type TokenBody,
  tokenRequest,
} from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'
import { refreshTokenIsLive } from '../helpers/tokens.js'

/**
 * One lineage per refresh family (issue 31): inside the retry window every answer to a spent refresh
 * token carries the SAME successor its rotation issued. Honest retries converge on it; a thief who
 * races the client inside the window gets the client's own next token, so whichever of them rotates
 * it second presents a spent token after its window, and the family dies.
 */
const WINDOW = 10
let t: TestApp
let clock: TestClock
let party: Party
beforeAll(async () => {
  ;({ t, clock, party } = await appWithParty())
})
afterAll(async () => t?.close())

function refresh(token: string) {
  return tokenRequest(t, { grant_type: 'refresh_token', refresh_token: token, client_id: party.client.id })
}

async function refreshed(token: string): Promise<TokenBody> {
  const res = await refresh(token)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

const familyOf = (tokens: TokenBody) => jwtClaims(tokens.access_token).family_id as string

async function familyRevokedReason(tokens: TokenBody): Promise<string | null> {
  const row = await t.database.db
    .selectFrom('refresh_families')
    .select(['revoked_at', 'revoked_reason'])
    .where('id', '=', familyOf(tokens))
    .executeTakeFirstOrThrow()
  return row.revoked_at ? row.revoked_reason : null
}

async function heads(tokens: TokenBody): Promise<number> {
  const rows = await t.database.db
    .selectFrom('refresh_tokens')
    .select('token_hash')
    .where('family_id', '=', familyOf(tokens))
    .where('rotated_at', 'is', null)
    .execute()
  return rows.length
}

describe('the thief story: a stolen spent token raced inside the window', () => {
  it.each([
    ['the attacker rotates first, the client after', 'attacker'],
    ['the client rotates first, the attacker after', 'client'],
  ] as const)('%s: within one further rotation the family is dead', async (_name, first) => {
    const start = await exchangeCode(t, party)
    const client = await refreshed(start.refresh_token) // the client's rotation
    // The attacker holds a copy of the spent token and sends it 5 times at once inside the window.
    const stolen = await Promise.all(Array.from({ length: 5 }, () => refresh(start.refresh_token)))
    const answers = stolen.filter((r) => r.statusCode === 200).map((r) => r.json() as TokenBody)
    expect(answers.length).toBeGreaterThan(0)
    // Every answer is the client's own next token: no branch of the attacker's own.
    for (const a of answers) expect(a.refresh_token).toBe(client.refresh_token)
    expect(await heads(start)).toBe(1)
    await expectInvariants(t.database.db)

    // Both go on, each later than the other's window.
    const attacker = answers[0]!
    clock.advance(WINDOW + 1)
    const ahead = await refreshed((first === 'attacker' ? attacker : client).refresh_token)
    clock.advance(WINDOW + 1)
    const behind = await refresh((first === 'attacker' ? client : attacker).refresh_token)
    expect(behind.statusCode).toBe(400)
    expect(behind.json().error).toBe('invalid_grant')
    expect(await familyRevokedReason(start)).toBe('refresh_token_reuse')
    // Whoever got ahead is dead too.
    expect(await refreshTokenIsLive(t, ahead.refresh_token)).toBe(false)
    expect((await refresh(ahead.refresh_token)).statusCode).toBe(400)
    await expectInvariants(t.database.db)
  })

  it('the attacker alone, after the client stopped: its lineage is the client’s, and the client’s next use kills it', async () => {
    const start = await exchangeCode(t, party)
    const client = await refreshed(start.refresh_token)
    clock.advance(WINDOW - 1)
    const attacker = await refreshed(start.refresh_token)
    expect(attacker.refresh_token).toBe(client.refresh_token)
    // The attacker rotates on several times; the client comes back later with what it holds.
    let latest = attacker
    for (let i = 0; i < 3; i++) {
      clock.advance(WINDOW + 1)
      latest = await refreshed(latest.refresh_token)
    }
    clock.advance(WINDOW + 1)
    expect((await refresh(client.refresh_token)).statusCode).toBe(400)
    expect(await familyRevokedReason(start)).toBe('refresh_token_reuse')
    expect((await refresh(latest.refresh_token)).statusCode).toBe(400)
  })
})

describe('the honest stories keep working', () => {
  it('a lost answer: the retry gets the same refresh token, which rotates on', async () => {
    const start = await exchangeCode(t, party)
    const lost = await refreshed(start.refresh_token)
    clock.advance(3)
    const retry = await refreshed(start.refresh_token)
    expect(retry.refresh_token).toBe(lost.refresh_token)
    let latest = retry
    for (let i = 0; i < 3; i++) {
      clock.advance(WINDOW + 1)
      latest = await refreshed(latest.refresh_token)
    }
    expect(await familyRevokedReason(start)).toBeNull()
    expect(await heads(start)).toBe(1)
    await expectInvariants(t.database.db)
  })

  it('two tabs at once, then both using the newest token, round after round', async () => {
    const start = await exchangeCode(t, party)
    let newest = start.refresh_token
    for (let round = 0; round < 4; round++) {
      const [a, b] = await Promise.all([refreshed(newest), refreshed(newest)])
      expect(a.refresh_token).toBe(b.refresh_token)
      expect(a.access_token).not.toBe(b.access_token)
      newest = a.refresh_token
      clock.advance(round % 2 === 0 ? 2 : WINDOW + 1)
    }
    expect(await familyRevokedReason(start)).toBeNull()
    expect(await refreshTokenIsLive(t, newest)).toBe(true)
    expect(await heads(start)).toBe(1)
    await expectInvariants(t.database.db)
  })
})

describe('the held successor', () => {
  it('is stored sealed, never in clear, and wiped by housekeeping once the window is over', async () => {
    const start = await exchangeCode(t, party)
    const next = await refreshed(start.refresh_token)
    const held = async () =>
      (
        await t.database.db
          .selectFrom('refresh_tokens')
          .select('successor_encrypted')
          .where('token_hash', '=', sha256(start.refresh_token))
          .executeTakeFirstOrThrow()
      ).successor_encrypted
    const sealed = await held()
    expect(sealed).toMatch(/^[A-Za-z0-9_-]{16}:v1\./)
    expect(sealed).not.toContain(next.refresh_token)
    await t.services.housekeeping.run()
    expect(await held()).toBe(sealed) // still inside the window
    clock.advance(WINDOW)
    await t.services.housekeeping.run()
    expect(await held()).toBeNull()
    // Past the window the spent token is theft, as always.
    expect((await refresh(start.refresh_token)).statusCode).toBe(400)
    expect(await familyRevokedReason(start)).toBe('refresh_token_reuse')
  })
})
