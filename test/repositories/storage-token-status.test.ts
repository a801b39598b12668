import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { findRefreshTokenRecords } from '../../src/grants/refresh-token.repository.js'
import { areAccessTokensLive, denyAccessToken } from '../../src/tokens/access-token-status.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Token status in storage: many access or refresh tokens answered in one statement. (The shared
 * storage suite, run on PostgreSQL and PGlite: storage-suite.ts.)
 */
const { fixture, insertFamily } = storageSuite()

describe(STORAGE_ON, () => {
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
})
