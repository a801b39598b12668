import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertUser } from '../../src/accounts/user.repository.js'
import { disableClient, insertClient } from '../../src/clients/client.repository.js'
import { insertAuthorizationCode } from '../../src/grants/authorization-code.repository.js'
import {
  type CodeRedemptionValues,
  codeRefusal,
  redeemAuthorizationCodeRows,
} from '../../src/grants/code-redemption.repository.js'
import { checkDpopBinding } from '../../src/grants/refresh-rotation.js'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import {
  findRefreshTokenRecord,
  REFRESH_RETRY_ANSWERS,
  refreshTokenRefusal,
  rotateRefreshTokens,
} from '../../src/grants/refresh-token.repository.js'
import { newUuid } from '../../src/lib/identifiers.js'
import { s256Challenge } from '../../src/lib/pkce.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

/**
 * The hot statements check an artifact in SQL; the slow paths and introspection say why in
 * TypeScript (codeRefusal, refreshTokenRefusal). Each case below goes to both, on a fresh row, and
 * both must give the same verdict: issue, or refuse.
 */
let database: TestDatabase
const now = new Date('2026-01-01T00:00:00Z')
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000)
const verifier = 'v'.repeat(43)
const REDIRECT = 'https://app.example/cb'
const API_A = 'https://links.example/api'
const API_B = 'https://shop.example/api'
const JKT_A = 'a'.repeat(43)
const JKT_B = 'b'.repeat(43)

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

/** A user, their grant of links:read to a client registered for links:read, and another client. */
async function parties() {
  const db = database.db
  const user = await insertUser(db, `${randomToken(6)}@example.com`, 'hash')
  const register = (scopes: string[]) =>
    insertClient(db, { id: randomToken(16), name: 'App', redirectUris: [REDIRECT], scopes })
  const client = await register(['links:read'])
  const other = await register(['links:read'])
  const grant = await upsertGrant(db, { userId: user.id, clientId: client.id, scopes: ['links:read'] }, now)
  return { db, user, client, other, grant }
}

describe('authorization codes: the redemption statement and codeRefusal agree', () => {
  interface CodeCase {
    code?: {
      scopes?: string[]
      expiresAt?: Date
      codeChallenge?: string
      resources?: string[]
      dpopJkt?: string
    }
    attempt?: {
      byOtherClient?: boolean
      redirectUri?: string | null
      verifier?: string
      resource?: string
      dpopJkt?: string
    }
    revokeGrant?: boolean
  }
  const cases: [string, CodeCase][] = [
    ['a good code', {}],
    ['a good code without redirect_uri', { attempt: { redirectUri: null } }],
    ['another client', { attempt: { byOtherClient: true } }],
    ['expired', { code: { expiresAt: now } }],
    ['another redirect_uri', { attempt: { redirectUri: 'https://app.example/other' } }],
    ['a wrong verifier', { attempt: { verifier: 'w'.repeat(43) } }],
    ['scopes beyond the client’s', { code: { scopes: ['links:read', 'links:write'] } }],
    ['a revoked grant', { revokeGrant: true }],
    ['its one resource, named', { code: { resources: [API_A] }, attempt: { resource: API_A } }],
    ['its one resource, not named', { code: { resources: [API_A] } }],
    ['one of its resources, named', { code: { resources: [API_A, API_B] }, attempt: { resource: API_B } }],
    ['several resources, none named', { code: { resources: [API_A, API_B] } }],
    ['a resource it was not for', { code: { resources: [API_A] }, attempt: { resource: API_B } }],
    ['a resource, for a code of none', { attempt: { resource: API_A } }],
    ['expired, with a wrong verifier', { code: { expiresAt: now }, attempt: { verifier: 'w'.repeat(43) } }],
    ['bound to a key (dpop_jkt), proof with it', { code: { dpopJkt: JKT_A }, attempt: { dpopJkt: JKT_A } }],
    ['bound to a key, proof with another', { code: { dpopJkt: JKT_A }, attempt: { dpopJkt: JKT_B } }],
    ['bound to a key, no proof', { code: { dpopJkt: JKT_A } }],
    ['not bound, a proof', { attempt: { dpopJkt: JKT_B } }],
    [
      'bound to a key, proof with it, grant revoked',
      { code: { dpopJkt: JKT_A }, attempt: { dpopJkt: JKT_A }, revokeGrant: true },
    ],
  ]

  it.each(cases)('%s', async (_name, c) => {
    const p = await parties()
    const code = {
      clientId: p.client.id,
      redirectUri: REDIRECT,
      scopes: c.code?.scopes ?? ['links:read'],
      codeChallenge: c.code?.codeChallenge ?? s256Challenge(verifier),
      expiresAt: c.code?.expiresAt ?? later(60),
      resources: c.code?.resources ?? [],
      dpopJkt: c.code?.dpopJkt ?? null,
    }
    const codeHash = sha256(randomToken())
    await insertAuthorizationCode(p.db, {
      ...code,
      codeHash,
      userId: p.user.id,
      grantId: p.grant.id,
      createdAt: now,
    })
    if (c.revokeGrant) await revokeGrantsWhere(p.db, { grantId: p.grant.id }, now, 'test')
    const attemptingClient = c.attempt?.byOtherClient ? p.other : p.client
    const values: CodeRedemptionValues = {
      codeHash,
      clientId: attemptingClient.id,
      redirectUri: c.attempt?.redirectUri === undefined ? REDIRECT : c.attempt.redirectUri,
      expectedChallenge: s256Challenge(c.attempt?.verifier ?? verifier),
      resource: c.attempt?.resource ?? null,
      dpopJkt: c.attempt?.dpopJkt ?? null,
      familyId: newUuid(),
      tokenHash: sha256(randomToken()),
      now,
      familyExpiresAt: later(3600),
      tokenExpiresAt: later(600),
    }

    const typescript = codeRefusal(code, values, attemptingClient.scopes, !c.revokeGrant)
    const row = (await redeemAuthorizationCodeRows(p.db, [values]))[0]!

    expect(row.consumed).toBeDefined()
    expect(row.issue !== undefined).toBe(typescript === undefined)
  })
})

describe('refresh tokens: the rotation statement and refreshTokenRefusal agree', () => {
  interface TokenCase {
    token?: { rotated?: boolean; expiresAt?: Date }
    family?: {
      revoked?: boolean
      expiresAt?: Date
      scopes?: string[]
      resources?: string[]
      dpopJkt?: string
    }
    revokeGrant?: boolean
    disableClient?: boolean
    requireDpop?: boolean
    use?: { byOtherClient?: boolean; requestedScopes?: string[] | null; resource?: string; dpopJkt?: string }
  }
  /**
   * The retry window (REFRESH_REUSE_WINDOW): the token rotated `spentAgo` seconds before now and has
   * given `windowAnswers` since; `window` is the setting (none, as with 0, when absent); `wiped`: its
   * held successor is gone (housekeeping, or a rotation with no window).
   */
  /** A stand-in for a sealed successor: the statement stores and returns it, never opens it. */
  const HELD = 'sealed-successor-of-the-first-rotation'
  type RetryCase = TokenCase & { spentAgo?: number; windowAnswers?: number; window?: number; wiped?: boolean }
  const cases: [string, TokenCase][] = [
    ['a live token', {}],
    [
      'a live token, narrowed',
      { family: { scopes: ['links:read', 'links:write'] }, use: { requestedScopes: ['links:read'] } },
    ],
    ['a live token, the same scopes asked', { use: { requestedScopes: ['links:read'] } }],
    ['another client', { use: { byOtherClient: true } }],
    ['rotated', { token: { rotated: true } }],
    ['a revoked family', { family: { revoked: true } }],
    ['a revoked grant', { revokeGrant: true }],
    ['an expired token', { token: { expiresAt: now } }],
    ['an expired family', { family: { expiresAt: now } }],
    ['scopes beyond the family’s', { use: { requestedScopes: ['links:read', 'links:write'] } }],
    ['a disabled client (its grants revoked with it)', { disableClient: true }],
    ['its one resource, named', { family: { resources: [API_A] }, use: { resource: API_A } }],
    ['its one resource, not named', { family: { resources: [API_A] } }],
    ['another of its resources, named', { family: { resources: [API_A, API_B] }, use: { resource: API_B } }],
    ['several resources, none named', { family: { resources: [API_A, API_B] } }],
    ['a resource it was not for', { family: { resources: [API_A] }, use: { resource: API_B } }],
    ['a resource, for a family of none', { use: { resource: API_A } }],
    ['rotated and another client', { token: { rotated: true }, use: { byOtherClient: true } }],
    ['bound to a key, proof with it', { family: { dpopJkt: JKT_A }, use: { dpopJkt: JKT_A } }],
    ['bound to a key, proof with another', { family: { dpopJkt: JKT_A }, use: { dpopJkt: JKT_B } }],
    ['bound to a key, no proof', { family: { dpopJkt: JKT_A } }],
    ['bound, rotated, no proof', { family: { dpopJkt: JKT_A }, token: { rotated: true } }],
    ['not bound, a proof', { use: { dpopJkt: JKT_B } }],
    ['a client that requires DPoP, no proof', { requireDpop: true }],
    ['a client that requires DPoP, a proof', { requireDpop: true, use: { dpopJkt: JKT_B } }],
  ]
  /** A token spent 3 s ago, presented again with a 10 s retry window, and what may still refuse it. */
  const retry = (c: RetryCase = {}): RetryCase => ({
    spentAgo: 3,
    window: 10,
    ...c,
    token: { rotated: true, ...c.token },
  })
  const retryCases: [string, RetryCase][] = [
    ['retry: spent inside the window', retry()],
    ['retry: spent this very instant', retry({ spentAgo: 0 })],
    ['retry: spent 9 s ago of 10', retry({ spentAgo: 9 })],
    ['retry: spent exactly a window ago', retry({ spentAgo: 10 })],
    ['retry: spent after the window', retry({ spentAgo: 11 })],
    ['retry: window 0', retry({ spentAgo: 0, window: 0 })],
    ['retry: one answer left', retry({ windowAnswers: REFRESH_RETRY_ANSWERS - 1 })],
    ['retry: every answer given', retry({ windowAnswers: REFRESH_RETRY_ANSWERS })],
    ['retry: its successor no longer held', retry({ wiped: true })],
    ['retry: another client', retry({ use: { byOtherClient: true } })],
    ['retry: a revoked family', retry({ family: { revoked: true } })],
    ['retry: a revoked grant', retry({ revokeGrant: true })],
    ['retry: a disabled client', retry({ disableClient: true })],
    ['retry: an expired token', retry({ token: { expiresAt: now } })],
    ['retry: an expired family', retry({ family: { expiresAt: now } })],
    [
      'retry: narrowed',
      retry({ family: { scopes: ['links:read', 'links:write'] }, use: { requestedScopes: ['links:read'] } }),
    ],
    ['retry: scopes beyond the family’s', retry({ use: { requestedScopes: ['links:read', 'links:write'] } })],
    ['retry: its one resource, named', retry({ family: { resources: [API_A] }, use: { resource: API_A } })],
    ['retry: a resource it was not for', retry({ family: { resources: [API_A] }, use: { resource: API_B } })],
  ]

  it.each<[string, RetryCase]>([...cases, ...retryCases])('%s', async (_name, c) => {
    const p = await parties()
    const family = await p.db
      .insertInto('refresh_families')
      .values({
        grant_id: p.grant.id,
        user_id: p.user.id,
        client_id: p.client.id,
        scopes: c.family?.scopes ?? ['links:read'],
        resources: c.family?.resources ?? [],
        created_at: now,
        expires_at: c.family?.expiresAt ?? later(3600),
        revoked_at: c.family?.revoked ? now : null,
        dpop_jkt: c.family?.dpopJkt ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow()
    const tokenHash = sha256(randomToken())
    await p.db
      .insertInto('refresh_tokens')
      .values({
        token_hash: tokenHash,
        family_id: family.id,
        scopes: c.family?.scopes ?? ['links:read'],
        created_at: now,
        expires_at: c.token?.expiresAt ?? later(600),
        rotated_at: c.token?.rotated ? later(-(c.spentAgo ?? 0)) : null,
        window_answers: c.windowAnswers ?? 0,
        successor_encrypted: c.token?.rotated && !c.wiped ? HELD : null,
      })
      .execute()
    if (c.revokeGrant) await revokeGrantsWhere(p.db, { grantId: p.grant.id }, now, 'test')
    if (c.disableClient)
      await p.db.transaction().execute(async (trx) => {
        await disableClient(trx, p.client.id, now)
        await revokeGrantsWhere(trx, { clientId: p.client.id }, now, 'client_disabled')
      })
    if (c.requireDpop)
      await p.db.updateTable('clients').set({ require_dpop: true }).where('id', '=', p.client.id).execute()
    const use = {
      retryWindowStart: c.window ? later(-c.window) : null,
      clientId: c.use?.byOtherClient ? p.other.id : p.client.id,
      requestedScopes: c.use?.requestedScopes ?? null,
      resource: c.use?.resource ?? null,
      dpopJkt: c.use?.dpopJkt ?? null,
    }

    const record = await findRefreshTokenRecord(p.db, tokenHash)
    // The slow path asks the DPoP binding first (for the token's own client), then the other lines.
    const binding =
      record!.clientId === use.clientId ? checkDpopBinding(record!, { dpopJkt: c.use?.dpopJkt }) : undefined
    const typescript = binding ?? refreshTokenRefusal(record!, now, use)
    const [rotated] = await rotateRefreshTokens(p.db, [
      {
        tokenHash,
        newTokenHash: sha256(randomToken()),
        clientId: use.clientId,
        requestedScopes: use.requestedScopes,
        resource: use.resource,
        dpopJkt: use.dpopJkt,
        now,
        retryWindowStart: use.retryWindowStart,
        successorSealed: 'sealed-successor-of-this-rotation',
        newTokenExpiresAt: later(600),
        touchGrantBefore: now,
      },
    ])

    expect(rotated !== undefined).toBe(typescript === undefined)
    // A retry counts its answer on the spent token and leaves the moment it rotated alone.
    const after = await findRefreshTokenRecord(p.db, tokenHash)
    expect(rotated?.retried ?? false).toBe(rotated !== undefined && c.token?.rotated === true)
    expect(after!.windowAnswers).toBe((c.windowAnswers ?? 0) + (rotated?.retried ? 1 : 0))
    // A retry answers the successor held since the rotation; a rotation holds its own, answering none.
    expect(rotated?.successorSealed ?? null).toBe(rotated?.retried ? HELD : null)
    if (c.token?.rotated) expect(after!.rotatedAt).toEqual(record!.rotatedAt)
    // Introspection asks the same function without a use: the client and scope lines drop out.
    const live = refreshTokenRefusal(record!, now) === undefined
    expect(live).toBe(
      !c.token?.rotated &&
        !c.family?.revoked &&
        !c.revokeGrant &&
        !c.disableClient &&
        !c.token?.expiresAt &&
        !c.family?.expiresAt,
    )
  })
})
