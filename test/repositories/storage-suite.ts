import { afterAll, beforeAll } from 'vitest'
import { insertSession } from '../../src/accounts/session.repository.js'
import { insertUser } from '../../src/accounts/user.repository.js'
import { insertClient } from '../../src/clients/client.repository.js'
import {
  type CodeForSession,
  insertAuthorizationCode,
  insertAuthorizationCodesForSessions,
} from '../../src/grants/authorization-code.repository.js'
import {
  type Counts,
  type Cutoffs,
  HOUSEKEEPING_STEPS,
  type HousekeepingStep,
  inLockedBatch,
} from '../../src/housekeeping/housekeeping.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

/**
 * One suite for every storage behaviour (after Ory Hydra's persistence tests), in one file per
 * behaviour (storage-*.test.ts): CI runs it on PostgreSQL and once more on PGlite
 * (LINKAUTH_TEST_ENGINE=pglite), so both engines prove themselves. This is its shared set-up.
 */
export const STORAGE_ON = `storage on ${process.env.LINKAUTH_TEST_ENGINE ?? 'the selected engine'}`
export const now = new Date('2026-01-01T00:00:00Z')
export const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
/** Before every other cutoff of the suite: a step with only some cutoffs given touches nothing else. */
export const BEFORE_ALL = new Date('1990-01-01T00:00:00Z')

/**
 * The test file's own database (made before its tests, closed after them) and the fixtures that
 * write to it. Call once, at the top of a storage-*.test.ts file.
 */
export function storageSuite() {
  // Filled in by beforeAll: the tests read it only once it is.
  const database = {} as TestDatabase
  beforeAll(async () => {
    Object.assign(database, await createTestDatabase())
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
  type Fixture = Awaited<ReturnType<typeof fixture>>

  /** Inserts a code for the fixture's user and client; returns its hash. */
  async function insertCode(
    f: Fixture,
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
  async function insertFamily(f: Fixture, grantId: string): Promise<string> {
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

  return { database, fixture, insertCode, insertFamily, sessionCodeFixture, runStep, deleteOver }
}
