import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as m0005 from '../../migrations/0005_housekeeping.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

const ADDED = [
  'sign_in_sessions_expires_at_idx',
  'revoked_access_tokens_expires_at_idx',
  'refresh_families_expires_at_idx',
  'refresh_families_revoked_at_idx',
  'authorization_codes_family_id_idx',
  'authorization_codes_unbound_expires_at_idx',
]
const REPLACED = 'authorization_codes_expires_at_idx'

async function indexes(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select indexname as name from pg_indexes where indexname = any(${[...ADDED, REPLACED]}::text[])
     order by indexname`.execute(database.db)
  return rows.map((r) => r.name)
}

async function familyTriggerSkipsExpired(): Promise<boolean> {
  const { rows } = await sql<{ src: string }>`
    select prosrc as src from pg_proc where proname = 'family_revocation_event'`.execute(database.db)
  return rows[0]!.src.includes('revocation_event_until(old.expires_at)')
}

describe('migration 0005: the indexes of housekeeping', () => {
  it('goes down to 0004 and up again', async () => {
    expect(await indexes()).toEqual([...ADDED].sort())
    expect(await familyTriggerSkipsExpired()).toBe(true)
    await database.db.transaction().execute((trx) => m0005.down(trx))
    expect(await indexes()).toEqual([REPLACED])
    expect(await familyTriggerSkipsExpired()).toBe(false)
    await database.db.transaction().execute((trx) => m0005.up(trx))
    expect(await indexes()).toEqual([...ADDED].sort())
    expect(await familyTriggerSkipsExpired()).toBe(true)
  })

  it('skips an index an operator built beforehand (CREATE INDEX CONCURRENTLY)', async () => {
    await database.db.transaction().execute((trx) => m0005.down(trx))
    await sql`create index concurrently sign_in_sessions_expires_at_idx on sign_in_sessions (expires_at)`.execute(
      database.db,
    )
    await database.db.transaction().execute((trx) => m0005.up(trx))
    expect(await indexes()).toEqual([...ADDED].sort())
  })
})
