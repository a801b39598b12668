import { describe, expect, it } from 'vitest'
import { revokeGrantsWhere } from '../../src/grants/grant-revocation.repository.js'
import { findLiveGrant, upsertGrant } from '../../src/grants/grant.repository.js'
import { now, STORAGE_ON, storageSuite } from './storage-suite.js'

/**
 * Grants in storage: one live grant per user and client, widened, revoked with its refresh
 * families. (The shared storage suite, run on PostgreSQL and PGlite: storage-suite.ts.)
 */
const { fixture, insertFamily } = storageSuite()

describe(STORAGE_ON, () => {
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
})
