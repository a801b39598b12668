import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertUser } from '../../src/accounts/user.repository.js'
import { disableClient, insertClient } from '../../src/clients/client.repository.js'
import { insertAuthorizationCode } from '../../src/grants/authorization-code.repository.js'
import {
  type CodeRedemptionValues,
  codeRefusal,
  redeemAuthorizationCodeRow,
} from '../../src/grants/code-redemption.repository.js'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import {
  findRefreshTokenRecord,
  refreshTokenRefusal,
  rotateRefreshToken,
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
    code?: { scopes?: string[]; expiresAt?: Date; codeChallenge?: string; resources?: string[] }
    attempt?: { byOtherClient?: boolean; redirectUri?: string | null; verifier?: string; resource?: string }
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
      familyId: newUuid(),
      tokenHash: sha256(randomToken()),
      now,
      familyExpiresAt: later(3600),
      tokenExpiresAt: later(600),
    }

    const typescript = codeRefusal(code, values, attemptingClient.scopes, !c.revokeGrant)
    const row = await redeemAuthorizationCodeRow(p.db, values)

    expect(row.consumed).toBeDefined()
    expect(row.issue !== undefined).toBe(typescript === undefined)
  })
})

describe('refresh tokens: the rotation statement and refreshTokenRefusal agree', () => {
  interface TokenCase {
    token?: { rotated?: boolean; expiresAt?: Date }
    family?: { revoked?: boolean; expiresAt?: Date; scopes?: string[]; resources?: string[] }
    revokeGrant?: boolean
    disableClient?: boolean
    use?: { byOtherClient?: boolean; requestedScopes?: string[] | null; resource?: string }
  }
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
  ]

  it.each(cases)('%s', async (_name, c) => {
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
        rotated_at: c.token?.rotated ? now : null,
      })
      .execute()
    if (c.revokeGrant) await revokeGrantsWhere(p.db, { grantId: p.grant.id }, now, 'test')
    if (c.disableClient)
      await p.db.transaction().execute(async (trx) => {
        await disableClient(trx, p.client.id, now)
        await revokeGrantsWhere(trx, { clientId: p.client.id }, now, 'client_disabled')
      })
    const use = {
      clientId: c.use?.byOtherClient ? p.other.id : p.client.id,
      requestedScopes: c.use?.requestedScopes ?? null,
      resource: c.use?.resource ?? null,
    }

    const record = await findRefreshTokenRecord(p.db, tokenHash)
    const typescript = refreshTokenRefusal(record!, now, use)
    const rotated = await rotateRefreshToken(p.db, {
      tokenHash,
      newTokenHash: sha256(randomToken()),
      clientId: use.clientId,
      requestedScopes: use.requestedScopes,
      resource: use.resource,
      now,
      newTokenExpiresAt: later(600),
      touchGrantBefore: now,
    })

    expect(rotated !== undefined).toBe(typescript === undefined)
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
