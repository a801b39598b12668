import { describe, expect, it } from 'vitest'
import { deleteUser, findUserCredentialsByEmail, insertUser } from '../../src/accounts/user.repository.js'
import {
  disableClient,
  findClientById,
  hasClients,
  insertClient,
  listClients,
} from '../../src/clients/client.repository.js'
import { isUniqueViolation } from '../../src/db/errors.js'
import { findLiveGrant, upsertGrant } from '../../src/grants/grant.repository.js'
import { randomToken } from '../../src/lib/secrets.js'
import { createTestDatabase, testEngine } from '../helpers/database.js'
import { now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Users and clients in storage: email lookup in any case, the database's own checks on a client,
 * what deleting takes with it. (The shared storage suite, run on PostgreSQL and PGlite: storage-
 * suite.ts.)
 */
const { database, fixture, insertCode } = storageSuite()

describe(STORAGE_ON, () => {
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
    it('hasClients says whether any client is registered (the first-run hint), without listing them', async () => {
      const own = await createTestDatabase()
      try {
        expect(await hasClients(own.db)).toBe(false)
        await insertClient(own.db, {
          id: randomToken(16),
          name: 'App',
          redirectUris: ['https://app.example/cb'],
          scopes: ['links:read'],
        })
        expect(await hasClients(own.db)).toBe(true)
      } finally {
        await own.close()
      }
    })

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
})
