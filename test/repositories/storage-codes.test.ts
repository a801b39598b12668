import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { insertUser } from '../../src/accounts/user.repository.js'
import { disableClient } from '../../src/clients/client.repository.js'
import {
  findAuthorizationCode,
  insertAuthorizationCodeUnderLiveGrant,
} from '../../src/grants/authorization-code.repository.js'
import { redeemAuthorizationCodeRows } from '../../src/grants/code-redemption.repository.js'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { challenge, now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Authorization codes in storage: redemption, the conditional writes under a live grant or a
 * session, the keys and checks that hold a code to its grant. (The shared storage suite, run on
 * PostgreSQL and PGlite: storage-suite.ts.)
 */
const { fixture, insertCode, insertFamily, sessionCodeFixture } = storageSuite()

describe(STORAGE_ON, () => {
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
})
