import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as m0010 from '../../migrations/0010_signing_key_lifecycle.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

/**
 * Migration 0010 is expand-only: a version before it keeps working on the migrated schema (it reads
 * `retired_at` alone), a key-revoked event is accepted while every older event keeps its subject
 * check, and it goes down and up again.
 */

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

const insertKey = (kid: string, values: Record<string, unknown>) =>
  sql`insert into signing_keys (kid, alg, public_jwk, private_key_encrypted, created_at, retired_at ${sql.raw(
    Object.keys(values).length ? `, ${Object.keys(values).join(', ')}` : '',
  )})
      values (${kid}, 'ES256', '{}'::jsonb, 'v1.x', now(), ${sql.join(
        [null, ...Object.values(values)].map((v) => sql`${v}`),
      )})`.execute(database.db)

describe('migration 0010: the signing-key lifecycle', () => {
  it('a pending key is published and never active to a version that reads retired_at only', async () => {
    await insertKey('active-0010', {})
    const later = new Date(Date.now() + 3600_000)
    // What the schedule writes for a key made ahead (signing-key.repository.ts).
    await sql`insert into signing_keys (kid, alg, public_jwk, private_key_encrypted, created_at, pending, activates_at, retired_at)
      values ('pending-0010', 'ES256', '{}'::jsonb, 'v1.x', now(), true, ${later}, ${later})`.execute(
      database.db,
    )
    // The queries of the version before: the active key, and the keys published after a cut-off.
    const { rows: active } = await sql<{ kid: string }>`
      select kid from signing_keys where retired_at is null`.execute(database.db)
    expect(active.map((r) => r.kid)).toEqual(['active-0010'])
    const { rows: published } = await sql<{ kid: string }>`
      select kid from signing_keys where retired_at is null or retired_at > now() - interval '11 minutes'
       order by kid`.execute(database.db)
    expect(published.map((r) => r.kid)).toEqual(['active-0010', 'pending-0010'])
    // Its insert of a new active key still meets the one-active-key index.
    await expect(insertKey('second-active', {})).rejects.toThrow(/signing_keys_one_active/)
    await sql`delete from signing_keys where kid in ('active-0010', 'pending-0010')`.execute(database.db)
  })

  it('accepts a key-revoked event, still refuses an event without its subject, goes down and up', async () => {
    const event = (type: string, columns: string, value: string) =>
      sql`insert into revocation_events (type, ${sql.raw(columns)}, created_at, until)
          values (${type}, ${value}, now(), now() + interval '1 hour')`.execute(database.db)
    await event('key-revoked', 'kid', 'k1')
    await expect(event('key-revoked', 'client_id', 'c1')).rejects.toThrow(/revocation_events_key_subject/)
    await expect(event('client-disabled', 'kid', 'k1')).rejects.toThrow(/revocation_events_client_subject/)
    await expect(event('grant-revoked', 'kid', 'k1')).rejects.toThrow(/revocation_events_grant_subject/)

    await database.db.transaction().execute((trx) => m0010.down(trx))
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from information_schema.columns
       where table_name = 'signing_keys' and column_name in ('pending', 'activates_at', 'revoked_at', 'kek_id')`.execute(
      database.db,
    )
    expect(Number(rows[0]!.n)).toBe(0)
    await expect(
      sql`insert into revocation_events (type, client_id, created_at, until)
          values ('grant-revoked', 'c', now(), now())`.execute(database.db),
    ).rejects.toThrow(/revocation_events_subject/)
    await database.db.transaction().execute((trx) => m0010.up(trx))
    await event('key-revoked', 'kid', 'k2')
  })
})
