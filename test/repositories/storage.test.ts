import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertSession } from '../../src/accounts/session.repository.js'
import { deleteUser, findUserCredentialsByEmail, insertUser } from '../../src/accounts/user.repository.js'
import {
  disableClient,
  findClientById,
  insertClient,
  listClients,
} from '../../src/clients/client.repository.js'
import { isUniqueViolation } from '../../src/db/errors.js'
import { REVOCATION_EVENTS_CHANNEL } from '../../src/events/event-feed.service.js'
import {
  findPendingEvents,
  insertEventStream,
  recordStreamPoll,
  writeEventLifetime,
} from '../../src/events/event-stream.repository.js'
import {
  type CodeForSession,
  findAuthorizationCode,
  insertAuthorizationCode,
  insertAuthorizationCodesForSessions,
  insertAuthorizationCodeUnderLiveGrant,
} from '../../src/grants/authorization-code.repository.js'
import { redeemAuthorizationCodeRows } from '../../src/grants/code-redemption.repository.js'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { findLiveGrant, upsertGrant } from '../../src/grants/grant.repository.js'
import { findRefreshTokenRecords } from '../../src/grants/refresh-token.repository.js'
import {
  type Counts,
  type Cutoffs,
  HOUSEKEEPING_STEPS,
  type HousekeepingStep,
  inLockedBatch,
} from '../../src/housekeeping/housekeeping.repository.js'
import { areAccessTokensLive, denyAccessToken } from '../../src/tokens/access-token-status.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { insertPendingAuthorization } from '../../src/oauth/pending-authorization.repository.js'
import {
  deleteResourceServer,
  findResourceServerCredentials,
  findResourceTargets,
  insertResourceServer,
  listEnabledResources,
  replaceResourceServerSecret,
  setResourceServerDisabled,
} from '../../src/resource-servers/resource-server.repository.js'
import { createTestDatabase, type TestDatabase, testEngine } from '../helpers/database.js'

/**
 * One suite for every storage behaviour (after Ory Hydra's persistence tests): CI runs it on
 * PostgreSQL and once more on PGlite (LINKAUTH_TEST_ENGINE=pglite), so both engines prove themselves.
 */
let database: TestDatabase
const now = new Date('2026-01-01T00:00:00Z')
const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

async function fixture() {
  const db = database.db
  const user = await insertUser(db, `${randomToken(6)}@example.com`, 'hash')
  const client = await insertClient(db, {
    id: randomToken(16),
    name: 'App',
    redirectUris: ['https://app.example/cb'],
    scopes: ['links:read', 'links:write'],
  })
  return { db, user, client }
}

/** Inserts a code for the fixture's user and client; returns its hash. */
async function insertCode(
  f: Awaited<ReturnType<typeof fixture>>,
  grantId: string,
  overrides: { codeChallenge?: string; expiresAt?: Date } = {},
): Promise<string> {
  const codeHash = sha256(randomToken())
  await insertAuthorizationCode(f.db, {
    codeHash,
    clientId: f.client.id,
    userId: f.user.id,
    grantId,
    redirectUri: 'https://app.example/cb',
    scopes: ['links:read'],
    codeChallenge: overrides.codeChallenge ?? challenge,
    createdAt: now,
    expiresAt: overrides.expiresAt ?? now,
  })
  return codeHash
}

/** Starts a refresh family of the fixture's user and client under `grantId`; returns its id. */
async function insertFamily(f: Awaited<ReturnType<typeof fixture>>, grantId: string): Promise<string> {
  const row = await f.db
    .insertInto('refresh_families')
    .values({
      grant_id: grantId,
      user_id: f.user.id,
      client_id: f.client.id,
      scopes: ['links:read'],
      expires_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/**
 * A user signed in (a session live for a minute), the fixture's client, and `code(overrides)`, which
 * asks insertAuthorizationCodesForSessions for a links:read code of that session.
 */
async function sessionCodeFixture() {
  const f = await fixture()
  const sessionToken = randomToken()
  const sessionExpiresAt = new Date(now.getTime() + 60_000)
  await insertSession(f.db, {
    tokenHash: sha256(sessionToken),
    userId: f.user.id,
    csrfSecret: randomToken(),
    createdAt: now,
    expiresAt: sessionExpiresAt,
  })
  const code = async (overrides: Partial<CodeForSession> = {}) => {
    const [grantId] = await insertAuthorizationCodesForSessions(f.db, [
      {
        codeHash: sha256(randomToken()),
        clientId: f.client.id,
        sessionTokenHash: sha256(sessionToken),
        redirectUri: 'https://app.example/cb',
        scopes: ['links:read'],
        codeChallenge: challenge,
        createdAt: now,
        expiresAt: now,
        ...overrides,
      },
    ])
    return grantId
  }
  return { ...f, sessionExpiresAt, code }
}

/** Before every other cutoff of this file: a step with only some cutoffs given touches nothing else. */
const BEFORE_ALL = new Date('1990-01-01T00:00:00Z')

/** Runs one housekeeping step in batches of `limit` until it has nothing more to delete. */
async function runStep(
  step: HousekeepingStep,
  cutoffs: Partial<Cutoffs>,
  limit = 1000,
): Promise<{ deleted: Counts; batches: number; sizes: number[] }> {
  const all: Cutoffs = {
    expiredBefore: BEFORE_ALL,
    familiesRevokedBefore: BEFORE_ALL,
    familiesExpiredBefore: BEFORE_ALL,
    eventsUntil: BEFORE_ALL,
    streamsIdleSince: BEFORE_ALL,
    auditBefore: BEFORE_ALL,
    successorsRotatedBefore: BEFORE_ALL,
    ...cutoffs,
  }
  const { batch } = HOUSEKEEPING_STEPS.find((s) => s.name === step)!
  const deleted: Counts = {}
  const sizes: number[] = []
  for (let more = true; more;) {
    const result = (await inLockedBatch(database.db, (trx) => batch(trx, all, limit)))!
    const size = Object.values(result.deleted).reduce((a, b) => a + b, 0)
    sizes.push(size)
    for (const [table, n] of Object.entries(result.deleted))
      deleted[table as keyof Counts] = (deleted[table as keyof Counts] ?? 0) + n
    more = result.more
  }
  return { deleted, batches: sizes.length, sizes }
}

/** Deletes what one step finds over with `cutoffs`; how many rows of its own table went. */
async function deleteOver(
  step: Exclude<HousekeepingStep, 'refresh_families' | 'refresh_successors'>,
  cutoffs: Partial<Cutoffs>,
) {
  return (await runStep(step, cutoffs)).deleted[step] ?? 0
}

describe(`storage on ${process.env.LINKAUTH_TEST_ENGINE ?? 'the selected engine'}`, () => {
  it('runs on the engine the harness chose', () => {
    expect(['postgres', 'pglite']).toContain(testEngine())
    expect(database.engine).toBe(testEngine())
  })

  describe('users', () => {
    it('finds by email in any case, and refuses the same email in another case', async () => {
      const db = database.db
      const user = await insertUser(db, 'Case@Example.com', 'hash-1')
      const found = await findUserCredentialsByEmail(db, 'case@EXAMPLE.com')
      expect(found).toMatchObject({ id: user.id, email: 'Case@Example.com', passwordHash: 'hash-1' })
      expect(found?.createdAt).toBeInstanceOf(Date)
      const error = await insertUser(db, 'CASE@example.com', 'hash-2').catch((e: unknown) => e)
      expect(isUniqueViolation(error)).toBe(true)
    })

    it('deleting a user removes their grants and codes with them', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      await insertCode({ db, user, client }, grant.id)
      expect(await deleteUser(db, user.id)).toBe(true)
      expect(await deleteUser(db, user.id)).toBe(false)
      const left = await db
        .selectFrom('authorization_codes')
        .select('code_hash')
        .where('user_id', '=', user.id)
        .execute()
      expect(left).toEqual([])
      expect(await findLiveGrant(db, user.id, client.id)).toBeUndefined()
    })
  })

  describe('clients', () => {
    it('round-trips arrays and timestamps, lists, and disables idempotently', async () => {
      const { db, client } = await fixture()
      expect(await findClientById(db, client.id)).toEqual(client)
      expect((await listClients(db)).map((c) => c.id)).toContain(client.id)
      const first = await disableClient(db, client.id, now)
      const second = await disableClient(db, client.id, new Date(now.getTime() + 1000))
      expect(first?.disabledAt?.toISOString()).toBe(now.toISOString())
      expect(second?.disabledAt?.toISOString()).toBe(now.toISOString())
      expect(await disableClient(db, 'no-such-client', now)).toBeUndefined()
    })

    it('the database itself refuses 0 or 11 redirect URIs and a malformed id', async () => {
      const db = database.db
      const bad = [
        { id: randomToken(16), name: 'A', redirectUris: [], scopes: ['links:read'] },
        {
          id: randomToken(16),
          name: 'A',
          redirectUris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`),
          scopes: ['links:read'],
        },
        { id: 'bad id!', name: 'A', redirectUris: ['https://a.example/cb'], scopes: ['links:read'] },
      ]
      for (const client of bad) {
        const error = await insertClient(db, client).catch((e: unknown) => e)
        expect((error as { code?: string }).code).toBe('23514')
      }
    })
  })

  describe('grants', () => {
    it('creates one live grant per user and client and widens it to the union', async () => {
      const { db, user, client } = await fixture()
      const first = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const widened = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:write'] },
        now,
      )
      expect(widened.id).toBe(first.id)
      expect([...widened.scopes].sort()).toEqual(['links:read', 'links:write'])
      expect((await findLiveGrant(db, user.id, client.id))?.id).toBe(first.id)
    })

    it('concurrent approvals end with exactly one live grant', async () => {
      const { db, user, client } = await fixture()
      const grants = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          upsertGrant(
            db,
            { userId: user.id, clientId: client.id, scopes: [i % 2 ? 'links:read' : 'links:write'] },
            now,
          ),
        ),
      )
      expect(new Set(grants.map((g) => g.id)).size).toBe(1)
      const rows = await db.selectFrom('grants').select('id').where('user_id', '=', user.id).execute()
      expect(rows).toHaveLength(1)
    })

    it('revoking a grant revokes its refresh families; a new grant may follow', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const familyId = await insertFamily({ db, user, client }, grant.id)
      const revoked = await db
        .transaction()
        .execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
      expect(revoked.map((g) => g.id)).toEqual([grant.id])
      const fam = await db
        .selectFrom('refresh_families')
        .select(['revoked_at', 'revoked_reason'])
        .where('id', '=', familyId)
        .executeTakeFirstOrThrow()
      expect(fam.revoked_at?.toISOString()).toBe(now.toISOString())
      expect(fam.revoked_reason).toBe('test')
      const next = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      expect(next.id).not.toBe(grant.id)
    })
  })

  describe('authorization codes', () => {
    it('of concurrent redemptions exactly one issues a family; the others find the code used', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const codeHash = await insertCode({ db, user, client }, grant.id, {
        expiresAt: new Date(now.getTime() + 60_000),
      })
      const redeem = async () =>
        (
          await redeemAuthorizationCodeRows(db, [
            {
              codeHash,
              clientId: client.id,
              redirectUri: null,
              resource: null,
              dpopJkt: null,
              expectedChallenge: challenge,
              familyId: randomUUID(),
              tokenHash: sha256(randomToken()),
              now,
              familyExpiresAt: new Date(now.getTime() + 3_600_000),
              tokenExpiresAt: new Date(now.getTime() + 60_000),
            },
          ])
        )[0]!
      const results = await Promise.all(Array.from({ length: 10 }, redeem))
      expect(results.filter((r) => r.issue)).toHaveLength(1)
      expect(results.filter((r) => !r.consumed)).toHaveLength(9)
      const code = await findAuthorizationCode(db, codeHash)
      expect(code?.consumedAt?.toISOString()).toBe(now.toISOString())
      expect(code?.familyId).toBe(results.find((r) => r.issue)!.issue!.familyId)
      const tokens = await db
        .selectFrom('refresh_tokens')
        .select('family_id')
        .where('family_id', '=', code!.familyId!)
        .execute()
      expect(tokens).toHaveLength(1)
    })

    it('a code that fails a check is consumed and issues nothing', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const codeHash = await insertCode({ db, user, client }, grant.id, {
        expiresAt: new Date(now.getTime() + 60_000),
      })
      const [result] = await redeemAuthorizationCodeRows(db, [
        {
          codeHash,
          clientId: client.id,
          redirectUri: null,
          resource: null,
          dpopJkt: null,
          expectedChallenge: 'another-challenge-another-challenge-another',
          familyId: randomUUID(),
          tokenHash: sha256(randomToken()),
          now,
          familyExpiresAt: now,
          tokenExpiresAt: now,
        },
      ])
      expect(result!.issue).toBeUndefined()
      expect(result!.consumed?.codeChallenge).toBe(challenge)
      const code = await findAuthorizationCode(db, codeHash)
      expect(code?.consumedAt).not.toBeNull()
      expect(code?.familyId).toBeNull()
    })

    it('a code under the live grant is written only when that grant covers the scopes', async () => {
      const { db, user, client } = await fixture()
      const code = (scopes: string[], clientId = client.id) => ({
        codeHash: sha256(randomToken()),
        clientId,
        userId: user.id,
        redirectUri: 'https://app.example/cb',
        scopes,
        codeChallenge: challenge,
        createdAt: now,
        expiresAt: now,
      })
      expect(await insertAuthorizationCodeUnderLiveGrant(db, code(['links:read']))).toBeUndefined()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      expect(await insertAuthorizationCodeUnderLiveGrant(db, code(['links:read']))).toBe(grant.id)
      expect(
        await insertAuthorizationCodeUnderLiveGrant(db, code(['links:read', 'links:write'])),
      ).toBeUndefined()
      await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
      expect(await insertAuthorizationCodeUnderLiveGrant(db, code(['links:read']))).toBeUndefined()
      const written = await db
        .selectFrom('authorization_codes')
        .select('grant_id')
        .where('user_id', '=', user.id)
        .execute()
      expect(written).toEqual([{ grant_id: grant.id }])
    })

    it('a code for a session is written only when session, client, redirect_uri and grant all allow it', async () => {
      const { db, user, client, sessionExpiresAt, code } = await sessionCodeFixture()
      const someoneElse = await insertUser(db, `${randomToken(6)}@example.com`, 'hash')
      await upsertGrant(db, { userId: someoneElse.id, clientId: client.id, scopes: ['links:read'] }, now)
      expect(await code()).toBeUndefined() // no grant of this session's user yet (another's does not count)
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read', 'links:write'] },
        now,
      )
      expect(await code()).toBe(grant.id)
      expect(await code({ scopes: ['links:read', 'links:write'] })).toBe(grant.id)
      // Every condition on its own refuses:
      expect(await code({ sessionTokenHash: sha256(randomToken()) })).toBeUndefined() // unknown session
      expect(await code({ createdAt: sessionExpiresAt })).toBeUndefined() // session expired by then
      expect(await code({ redirectUri: 'https://app.example/cb/' })).toBeUndefined() // not registered
      expect(await code({ redirectUri: 'https://APP.example/cb' })).toBeUndefined() // exact match only
      expect(await code({ scopes: ['links:read', 'tags:read'] })).toBeUndefined() // beyond the grant
      expect(await code({ clientId: randomToken(16) })).toBeUndefined() // another client
      // The client is registered for fewer scopes than its grant (narrowed since): the client wins.
      await db
        .updateTable('clients')
        .set({ scopes: ['links:read'] })
        .where('id', '=', client.id)
        .execute()
      expect(await code({ scopes: ['links:write'] })).toBeUndefined()
      expect(await code()).toBe(grant.id)
      await disableClient(db, client.id, now)
      expect(await code()).toBeUndefined() // disabled client
      const written = await db
        .selectFrom('authorization_codes')
        .select(['grant_id', 'redirect_uri', 'scopes'])
        .where('user_id', '=', user.id)
        .execute()
      expect(written).toHaveLength(3)
      expect(written.every((row) => row.redirect_uri === 'https://app.example/cb')).toBe(true)
    })

    it('a code for a session is not written under a revoked grant', async () => {
      const { db, user, client, code } = await sessionCodeFixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      expect(await code()).toBe(grant.id)
      await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
      expect(await code()).toBeUndefined()
    })

    it('a code or a family must name its grant’s own user and client (one composite key)', async () => {
      const { db, user, client } = await fixture()
      const other = await fixture()
      const othersGrant = await upsertGrant(
        db,
        { userId: other.user.id, clientId: other.client.id, scopes: ['links:read'] },
        now,
      )
      const codeError = await insertCode({ db, user, client }, othersGrant.id).catch((e: unknown) => e)
      expect((codeError as { code?: string }).code).toBe('23503')
      const familyError = await db
        .insertInto('refresh_families')
        .values({
          grant_id: othersGrant.id,
          user_id: user.id,
          client_id: other.client.id,
          scopes: ['links:read'],
          expires_at: now,
        })
        .execute()
        .catch((e: unknown) => e)
      expect((familyError as { code?: string }).code).toBe('23503')
    })

    it('deleting a client removes its grants, codes and families with them', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      await insertCode({ db, user, client }, grant.id)
      await insertFamily({ db, user, client }, grant.id)
      await db.deleteFrom('clients').where('id', '=', client.id).execute()
      for (const table of ['authorization_codes', 'refresh_families', 'grants'] as const) {
        const left = await db
          .selectFrom(table)
          .select('client_id')
          .where('client_id', '=', client.id)
          .execute()
        expect(left, table).toEqual([])
      }
    })

    it('the database refuses a challenge that is not S256-shaped', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const error = await insertCode({ db, user, client }, grant.id, {
        codeChallenge: 'plain-challenge',
      }).catch((e: unknown) => e)
      expect((error as { code?: string }).code).toBe('23514')
    })
  })

  describe('token status, many tokens in one statement', () => {
    it('answers each access token of a batch for itself, in order', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const family = () => insertFamily({ db, user, client }, grant.id)
      const [live, revoked] = [await family(), await family()]
      await db.updateTable('refresh_families').set({ revoked_at: now }).where('id', '=', revoked).execute()
      const ref = (familyId: string, overrides: Record<string, string> = {}) => ({
        jti: randomUUID(),
        grantId: grant.id,
        familyId,
        clientId: client.id,
        userId: user.id,
        ...overrides,
      })
      const denied = ref(live)
      await denyAccessToken(db, denied.jti, now, now)
      const batch = [
        ref(live),
        ref(revoked),
        denied,
        ref(live, { clientId: randomToken(16) }), // names another client than its family's
        ref(live, { userId: randomUUID() }), // another user
        ref(live, { grantId: randomUUID() }), // another grant
        ref(randomUUID()), // no such family
        ref(live),
      ]
      expect(await areAccessTokensLive(db, batch)).toEqual([
        true,
        false,
        false,
        false,
        false,
        false,
        false,
        true,
      ])
      expect(await areAccessTokensLive(db, [])).toEqual([])
    })

    it('finds each refresh token of a batch by its hash, in order, undefined for unknown ones', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      const familyId = await insertFamily({ db, user, client }, grant.id)
      const hashes = [sha256(randomToken()), sha256(randomToken())]
      // The first was rotated into the second (one unrotated token per family).
      for (const [i, token_hash] of hashes.entries()) {
        await db
          .insertInto('refresh_tokens')
          .values({
            token_hash,
            family_id: familyId,
            scopes: ['links:read'],
            expires_at: now,
            rotated_at: i === 0 ? now : null,
          })
          .execute()
      }
      const unknown = sha256(randomToken())
      const records = await findRefreshTokenRecords(db, [hashes[1]!, unknown, hashes[0]!, hashes[1]!])
      expect(records.map((r) => r?.familyId)).toEqual([familyId, undefined, familyId, familyId])
      expect(records[0]).toMatchObject({
        grantId: grant.id,
        clientId: client.id,
        userId: user.id,
        rotatedAt: null,
      })
    })
  })

  describe('resource servers', () => {
    it('finds the secret hash and resource of an enabled server only', async () => {
      const db = database.db
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      expect(server).toMatchObject({ resource: null, scopes: [] })
      expect(await findResourceServerCredentials(db, server.id)).toEqual({
        secretHash: 'h',
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        resource: null,
      })
      await db.updateTable('resource_servers').set({ disabled_at: now }).where('id', '=', server.id).execute()
      expect(await findResourceServerCredentials(db, server.id)).toBeUndefined()
    })

    it('replaces the secret keeping the old hash until the overlap ends, or not at all; disables, enables, deletes', async () => {
      const db = database.db
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h1',
      })
      const until = new Date(now.getTime() + 3600_000)
      expect(await replaceResourceServerSecret(db, server.id, 'h2', until)).toMatchObject({
        previousSecretExpiresAt: until,
      })
      expect(await findResourceServerCredentials(db, server.id)).toMatchObject({
        secretHash: 'h2',
        previousSecretHash: 'h1',
        previousSecretExpiresAt: until,
      })
      await replaceResourceServerSecret(db, server.id, 'h3', null)
      expect(await findResourceServerCredentials(db, server.id)).toMatchObject({
        secretHash: 'h3',
        previousSecretHash: null,
        previousSecretExpiresAt: null,
      })
      expect(await replaceResourceServerSecret(db, 'rs_nobody', 'h', null)).toBeUndefined()

      const disabled = await setResourceServerDisabled(db, server.id, now)
      expect(disabled?.disabledAt).toEqual(now)
      expect((await setResourceServerDisabled(db, server.id, until))?.disabledAt).toEqual(now)
      expect((await setResourceServerDisabled(db, server.id, null))?.disabledAt).toBeNull()
      expect(await deleteResourceServer(db, server.id)).toMatchObject({ id: server.id })
      expect(await deleteResourceServer(db, server.id)).toBeUndefined()
    })

    it('finds targets: enabled servers whose resource is exactly one of the strings, in one statement', async () => {
      const db = database.db
      const base = `https://${randomToken(6).toLowerCase()}.example`
      const insert = (resource: string | null, scopes: string[] = []) =>
        insertResourceServer(db, {
          id: `rs_${randomToken(8)}`,
          name: `API ${resource}`,
          secretHash: 'h',
          resource,
          scopes,
        })
      const links = await insert(`${base}/links`, ['links:read', 'links:write'])
      const shop = await insert(`${base}/shop`, ['ecommerce:write'])
      const retired = await insert(`${base}/retired`, ['links:read'])
      await insert(null)
      await db
        .updateTable('resource_servers')
        .set({ disabled_at: now })
        .where('id', '=', retired.id)
        .execute()

      const found = await findResourceTargets(db, [
        `${base}/links`,
        `${base}/shop`,
        `${base}/retired`,
        `${base}/links/`, // no normalisation: another string is another resource
        `${base.toUpperCase()}/links`,
        `${base}/unknown`,
      ])
      expect(found.sort((a, b) => a.resource.localeCompare(b.resource))).toEqual([
        { id: links.id, name: links.name, resource: `${base}/links`, scopes: ['links:read', 'links:write'] },
        { id: shop.id, name: shop.name, resource: `${base}/shop`, scopes: ['ecommerce:write'] },
      ])
      expect(await findResourceTargets(db, [])).toEqual([])
      const listed = await listEnabledResources(db)
      expect(listed).toEqual(expect.arrayContaining([`${base}/links`, `${base}/shop`]))
      expect(listed).not.toContain(`${base}/retired`)
    })

    it('refuses a second resource server with the same resource (unique violation)', async () => {
      const db = database.db
      const resource = `https://${randomToken(6).toLowerCase()}.example/api`
      await insertResourceServer(db, { id: `rs_${randomToken(8)}`, name: 'One', secretHash: 'h', resource })
      const second = insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'Two',
        secretHash: 'h',
        resource,
      })
      await expect(second).rejects.toSatisfy(isUniqueViolation)
    })
  })

  describe('revocation events', () => {
    const eventsOf = (db: typeof database.db, column: 'grant_id' | 'access_token_jti', id: string) =>
      db.selectFrom('revocation_events').selectAll().where(column, '=', id).execute()

    it('a revocation records its event in its own transaction and notifies listeners at commit', async () => {
      const { db, user, client } = await fixture()
      let notified = 0
      const stop = await database.listen(REVOCATION_EVENTS_CHANNEL, {
        notify: () => notified++,
        listening: () => {},
        lost: () => {},
      })
      try {
        const grant = await upsertGrant(
          db,
          { userId: user.id, clientId: client.id, scopes: ['links:read'] },
          now,
        )
        await db
          .insertInto('refresh_families')
          .values({ grant_id: grant.id, client_id: client.id, user_id: user.id, scopes: [], expires_at: now })
          .execute()
        await db
          .transaction()
          .execute(async (trx) => {
            await revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test')
            throw new Error('rolled back')
          })
          .catch(() => undefined)
        expect(await eventsOf(db, 'grant_id', grant.id)).toEqual([])
        await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
        // One event: the family revoked with its grant is covered by the grant's.
        const events = await eventsOf(db, 'grant_id', grant.id)
        expect(events).toHaveLength(1)
        expect(events[0]).toMatchObject({ type: 'grant-revoked', family_id: null, created_at: now })
        expect(events[0]!.until.getTime() - now.getTime()).toBe(660_000)
        await expect.poll(() => notified, { timeout: 5_000 }).toBeGreaterThan(0)
      } finally {
        await stop()
      }
    })

    it('deny-listing an access token twice records one event, until its exp + leeway', async () => {
      const db = database.db
      const jti = randomUUID()
      const exp = new Date(now.getTime() + 600_000)
      await denyAccessToken(db, jti, exp, now)
      await denyAccessToken(db, jti, exp, now)
      const events = await eventsOf(db, 'access_token_jti', jti)
      expect(events).toHaveLength(1)
      expect(events[0]!.until.getTime() - exp.getTime()).toBe(60_000)
    })

    it('the lifetime written for the triggers applies to later events', async () => {
      const { db, user, client } = await fixture()
      const grant = await upsertGrant(
        db,
        { userId: user.id, clientId: client.id, scopes: ['links:read'] },
        now,
      )
      await writeEventLifetime(db, { accessTokenTtl: 120, leeway: 30 })
      try {
        await db.transaction().execute((trx) => revokeGrantsWhere(trx, { grantId: grant.id }, now, 'test'))
      } finally {
        await writeEventLifetime(db, { accessTokenTtl: 600, leeway: 60 })
      }
      const [event] = await eventsOf(db, 'grant_id', grant.id)
      expect(event!.until.getTime() - now.getTime()).toBe(150_000)
    })

    it('a resource server gets at most `limit` live streams; idle ones do not count; others are unaffected', async () => {
      const db = database.db
      const at = new Date('2031-01-01T00:00:00Z')
      const servers = await Promise.all(
        [1, 2].map(() =>
          insertResourceServer(db, { id: `rs_${randomToken(8)}`, name: 'API', secretHash: 'h' }),
        ),
      )
      const create = (serverId: string, now = at) =>
        insertEventStream(db, {
          resourceServerId: serverId,
          now,
          idleSince: new Date(now.getTime() - 600_000),
          limit: 2,
        })
      // Created at once: the lock on the server's row makes them count one another.
      const first = await Promise.all([
        create(servers[0]!.id),
        create(servers[0]!.id),
        create(servers[0]!.id),
      ])
      expect(first.filter((id) => id !== undefined)).toHaveLength(2)
      expect(await create(servers[1]!.id)).toBeDefined()
      // Ten minutes later the first two are idle: they no longer count.
      const later = new Date(at.getTime() + 600_000)
      expect(await create(servers[0]!.id, later)).toBeDefined()
      expect(await create('rs_no_such_server', later)).toBeUndefined()
    })

    it('streams: pending is unacknowledged and unexpired, oldest first, per stream; housekeeping deletes both kinds', async () => {
      const db = database.db
      // Later than every other test's events, so that only these are pending.
      const later = new Date('2030-01-01T00:00:00Z')
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      const newStream = async () =>
        (await insertEventStream(db, {
          resourceServerId: server.id,
          now: later,
          idleSince: new Date(later.getTime() - 600_000),
          limit: 10,
        }))!
      const stream = await newStream()
      const sibling = await newStream()
      const jtis = [randomUUID(), randomUUID(), randomUUID()]
      for (const [i, jti] of jtis.entries()) {
        const at = new Date(later.getTime() + i * 1000)
        await denyAccessToken(db, jti, new Date(at.getTime() + (i + 1) * 60_000), at)
      }
      const pendingJtis = async (at: Date, limit = 10, of = stream) =>
        ((await findPendingEvents(db, [of], at, limit)).get(of) ?? []).map((e) => e.jti)
      const poll = (resourceServerId: string, now: Date, acknowledged: string[] = []) =>
        recordStreamPoll(db, {
          streamId: stream,
          resourceServerId,
          acknowledged,
          now,
          idleSince: new Date(now.getTime() - 600_000),
          touchBefore: new Date(now.getTime() - 60_000),
        })
      const pending = (await findPendingEvents(db, [stream], later, 10)).get(stream)!
      expect(pending.map((e) => e.jti)).toEqual(jtis)
      expect(await pendingJtis(later, 2)).toEqual(jtis.slice(0, 2))
      // Another resource server's poll of this stream acknowledges nothing.
      expect(await poll('rs_other', later, [pending[0]!.id])).toBe(false)
      expect(await poll(server.id, later, [pending[1]!.id, randomUUID()])).toBe(true)
      expect(await poll(server.id, later, [pending[1]!.id])).toBe(true)
      // One statement for both streams: each has its own acknowledgements.
      const both = await findPendingEvents(db, [stream, sibling], later, 10)
      expect(both.get(stream)!.map((e) => e.jti)).toEqual([jtis[0], jtis[2]])
      expect(both.get(sibling)!.map((e) => e.jti)).toEqual(jtis)
      // The first event's until is later + 2 min: past it, it is no longer pending.
      const afterFirst = new Date(later.getTime() + 150_000)
      expect(await pendingJtis(afterFirst)).toEqual([jtis[2]])

      const lastPolled = async () =>
        (
          await db
            .selectFrom('event_streams')
            .select('last_polled_at')
            .where('id', '=', stream)
            .executeTakeFirstOrThrow()
        ).last_polled_at
      expect(await poll('rs_other', later)).toBe(false)
      // Polled 30 s later: live, and not written (the last poll is recent enough).
      expect(await poll(server.id, new Date(later.getTime() + 30_000))).toBe(true)
      expect(await lastPolled()).toEqual(later)
      // Polled 90 s later: written.
      const polled = new Date(later.getTime() + 90_000)
      expect(await poll(server.id, polled)).toBe(true)
      expect(await lastPolled()).toEqual(polled)
      // Idle past its limit: no longer a stream.
      expect(await poll(server.id, new Date(polled.getTime() + 600_000))).toBe(false)

      expect(await deleteOver('revocation_events', { eventsUntil: afterFirst })).toBeGreaterThanOrEqual(1)
      expect(await pendingJtis(later)).toEqual([jtis[2]])
      expect(await deleteOver('event_streams', { streamsIdleSince: polled })).toBeGreaterThanOrEqual(2)
      expect(await poll(server.id, polled)).toBe(false)
      const acks = await db
        .selectFrom('revocation_event_acks')
        .select('event_id')
        .where('stream_id', '=', stream)
        .execute()
      expect(acks).toEqual([])
    })
  })

  describe('housekeeping', () => {
    /** Long before every other test's rows (2026 onwards): these cutoffs touch only this block's. */
    const at = new Date('2001-01-01T00:00:00Z')
    const justAfter = new Date(at.getTime() + 1)
    const exists = async (table: 'sign_in_sessions' | 'pending_authorizations', id: string) =>
      (await database.db.selectFrom(table).select('id').where('id', '=', id).execute()).length === 1

    it('each table: a row over exactly at its cutoff goes, one a millisecond later stays', async () => {
      const f = await fixture()
      const { db } = f
      const grant = await upsertGrant(
        db,
        { userId: f.user.id, clientId: f.client.id, scopes: ['links:read'] },
        at,
      )
      const session = (expiresAt: Date) =>
        insertSession(db, {
          tokenHash: sha256(randomToken()),
          userId: f.user.id,
          csrfSecret: 'c',
          createdAt: at,
          expiresAt,
        })
      const pending = async (expiresAt: Date) =>
        (
          await insertPendingAuthorization(db, {
            id: randomToken(16),
            clientId: f.client.id,
            redirectUri: 'https://app.example/cb',
            scopes: ['links:read'],
            state: null,
            codeChallenge: challenge,
            prompt: null,
            createdAt: at,
            expiresAt,
          })
        ).id
      const server = await insertResourceServer(db, {
        id: `rs_${randomToken(8)}`,
        name: 'API',
        secretHash: 'h',
      })
      const stream = (polledAt: Date) =>
        insertEventStream(db, {
          resourceServerId: server.id,
          now: polledAt,
          idleSince: BEFORE_ALL,
          limit: 10,
        })
      const rows = {
        sessions: [await session(at), await session(justAfter)],
        pendings: [await pending(at), await pending(justAfter)],
        codes: [
          await insertCode(f, grant.id, { expiresAt: at }),
          await insertCode(f, grant.id, { expiresAt: justAfter }),
        ],
        jtis: [randomUUID(), randomUUID()],
        streams: [(await stream(at))!, (await stream(justAfter))!],
      }
      await denyAccessToken(db, rows.jtis[0]!, at, at)
      await denyAccessToken(db, rows.jtis[1]!, justAfter, at)
      // The deny list's events last until expiry plus the leeway: exactly `at` + 60 s, and 1 ms later.
      const eventsUntil = new Date(at.getTime() + 60_000)

      expect(await deleteOver('sign_in_sessions', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('pending_authorizations', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('authorization_codes', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('revoked_access_tokens', { expiredBefore: at })).toBe(1)
      expect(await deleteOver('revocation_events', { eventsUntil })).toBe(1)
      expect(await deleteOver('event_streams', { streamsIdleSince: at })).toBe(1)

      expect([
        await exists('sign_in_sessions', rows.sessions[0]!),
        await exists('sign_in_sessions', rows.sessions[1]!),
      ]).toEqual([false, true])
      expect([
        await exists('pending_authorizations', rows.pendings[0]!),
        await exists('pending_authorizations', rows.pendings[1]!),
      ]).toEqual([false, true])
      expect(
        [
          await findAuthorizationCode(db, rows.codes[0]!),
          await findAuthorizationCode(db, rows.codes[1]!),
        ].map(Boolean),
      ).toEqual([false, true])
      const denied = await db
        .selectFrom('revoked_access_tokens')
        .select('jti')
        .where('jti', 'in', rows.jtis)
        .execute()
      expect(denied.map((r) => r.jti)).toEqual([rows.jtis[1]])
      const events = await db
        .selectFrom('revocation_events')
        .select('access_token_jti')
        .where('access_token_jti', 'in', rows.jtis)
        .execute()
      expect(events.map((r) => r.access_token_jti)).toEqual([rows.jtis[1]])
      const streams = await db
        .selectFrom('event_streams')
        .select('id')
        .where('id', 'in', rows.streams)
        .execute()
      expect(streams.map((r) => r.id)).toEqual([rows.streams[1]])
    })

    it('a batch deletes at most its size: 5 rows in batches of 2 take 3 batches', async () => {
      const f = await fixture()
      const expired = new Date('2000-01-01T00:00:00Z')
      for (let i = 0; i < 5; i++)
        await insertSession(f.db, {
          tokenHash: sha256(randomToken()),
          userId: f.user.id,
          csrfSecret: 'c',
          createdAt: expired,
          expiresAt: new Date(expired.getTime() + i * 1000),
        })
      const run = await runStep('sign_in_sessions', { expiredBefore: new Date('2000-06-01T00:00:00Z') }, 2)
      expect(run.sizes).toEqual([2, 2, 1])
      expect(run.deleted).toEqual({ sign_in_sessions: 5 })
    })

    it('refresh families: revoked ones after the horizon, expired ones after theirs, tokens in bounded batches; the code that started one stays while it does', async () => {
      const f = await fixture()
      const { db } = f
      const cutoff = new Date('2002-01-01T00:00:00Z')
      const later = new Date(cutoff.getTime() + 1)
      const farFuture = new Date('2100-01-01T00:00:00Z')
      const grant = await upsertGrant(
        db,
        { userId: f.user.id, clientId: f.client.id, scopes: ['links:read'] },
        at,
      )
      const family = async (expiresAt: Date, revokedAt: Date | null, tokens: number) => {
        const id = await insertFamily(f, grant.id)
        await db
          .updateTable('refresh_families')
          .set({ expires_at: expiresAt, revoked_at: revokedAt })
          .where('id', '=', id)
          .execute()
        for (let i = 0; i < tokens; i++)
          await db
            .insertInto('refresh_tokens')
            .values({
              token_hash: sha256(randomToken()),
              family_id: id,
              scopes: ['links:read'],
              expires_at: expiresAt,
              rotated_at: i < tokens - 1 ? at : null,
            })
            .execute()
        return id
      }
      const revoked = await family(farFuture, cutoff, 5)
      const revokedLater = await family(farFuture, later, 1)
      const expired = await family(cutoff, null, 1)
      const expiringLater = await family(later, null, 1)
      const code = await insertCode(f, grant.id, { expiresAt: at })
      await db
        .updateTable('authorization_codes')
        .set({ consumed_at: at, family_id: revoked })
        .where('code_hash', '=', code)
        .execute()
      const eventsBefore = await db
        .selectFrom('revocation_events')
        .select('id')
        .where('family_id', 'in', [revoked, expired])
        .execute()

      // A code that started a family is kept while the family is.
      await deleteOver('authorization_codes', { expiredBefore: cutoff })
      expect((await findAuthorizationCode(db, code))?.familyId).toBe(revoked)
      const run = await runStep(
        'refresh_families',
        { familiesRevokedBefore: cutoff, familiesExpiredBefore: cutoff },
        2,
      )
      expect(run.deleted).toEqual({ refresh_tokens: 6, refresh_families: 2 })
      expect(Math.max(...run.sizes)).toBeLessThanOrEqual(2)
      const left = await db
        .selectFrom('refresh_families')
        .select('id')
        .where('id', 'in', [revoked, revokedLater, expired, expiringLater])
        .execute()
      expect(left.map((r) => r.id).sort()).toEqual([revokedLater, expiringLater].sort())
      const tokens = await db
        .selectFrom('refresh_tokens')
        .select('family_id')
        .where('family_id', 'in', [revoked, revokedLater, expired, expiringLater])
        .execute()
      expect(tokens.map((r) => r.family_id).sort()).toEqual([revokedLater, expiringLater].sort())
      // Deleting a family long expired is no revocation: no event for resource servers.
      const eventsAfter = await db
        .selectFrom('revocation_events')
        .select('id')
        .where('family_id', 'in', [revoked, expired])
        .execute()
      expect(eventsAfter).toEqual(eventsBefore)
      // The family gone, its code is an ordinary expired one.
      expect((await findAuthorizationCode(db, code))?.familyId).toBeNull()
      expect(await deleteOver('authorization_codes', { expiredBefore: cutoff })).toBe(1)
      expect(await findAuthorizationCode(db, code)).toBeUndefined()
    })

    it('a batch finds the lock taken while another transaction holds it, and does nothing', async (ctx) => {
      // One connection on PGlite: there is no other session to hold the lock (and one process).
      if (database.engine === 'pglite') ctx.skip()
      const inner = await inLockedBatch(database.db, async () =>
        inLockedBatch(database.db, async () => 'second'),
      )
      expect(inner).toBeUndefined()
      expect(await inLockedBatch(database.db, async () => 'alone')).toBe('alone')
    })
  })
})
