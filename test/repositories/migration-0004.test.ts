import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as m0004 from '../../migrations/0004_one_key_to_the_grant.js'
import { insertUser } from '../../src/accounts/user.repository.js'
import { insertClient } from '../../src/clients/client.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

/** The foreign keys of a table: name → the columns it covers, in order. */
async function foreignKeys(table: string): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; columns: string }>`
    select c.conname as name,
           (select string_agg(a.attname, ',' order by k.ord)
              from unnest(c.conkey) with ordinality as k(attnum, ord)
              join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum) as columns
      from pg_constraint c
     where c.contype = 'f' and c.conrelid = ${table}::regclass
  `.execute(database.db)
  return Object.fromEntries(rows.map((r) => [r.name, r.columns]))
}

describe('migration 0004: one key from codes and families to their grant', () => {
  it('goes down to the three keys and up again over existing rows', async () => {
    const db = database.db
    const now = new Date()
    const user = await insertUser(db, `${randomToken(6)}@example.com`, 'hash')
    const client = await insertClient(db, {
      id: randomToken(16),
      name: 'App',
      redirectUris: ['https://app.example/cb'],
      scopes: ['links:read'],
    })
    const grant = await upsertGrant(db, { userId: user.id, clientId: client.id, scopes: ['links:read'] }, now)
    await db
      .insertInto('refresh_families')
      .values({
        grant_id: grant.id,
        user_id: user.id,
        client_id: client.id,
        scopes: ['links:read'],
        expires_at: now,
      })
      .execute()
    await db
      .insertInto('authorization_codes')
      .values({
        code_hash: sha256(randomToken()),
        client_id: client.id,
        user_id: user.id,
        grant_id: grant.id,
        redirect_uri: 'https://app.example/cb',
        scopes: ['links:read'],
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        expires_at: now,
      })
      .execute()

    expect(await foreignKeys('refresh_families')).toEqual({
      refresh_families_grant_fkey: 'grant_id,user_id,client_id',
    })
    await db.transaction().execute((trx) => m0004.down(trx))
    expect(await foreignKeys('refresh_families')).toEqual({
      refresh_families_grant_id_fkey: 'grant_id',
      refresh_families_user_id_fkey: 'user_id',
      refresh_families_client_id_fkey: 'client_id',
    })
    expect(await foreignKeys('authorization_codes')).toMatchObject({
      authorization_codes_grant_id_fkey: 'grant_id',
      authorization_codes_user_id_fkey: 'user_id',
      authorization_codes_client_id_fkey: 'client_id',
    })
    // Up again, checking the rows already there.
    await db.transaction().execute((trx) => m0004.up(trx))
    expect(await foreignKeys('authorization_codes')).toEqual({
      authorization_codes_grant_fkey: 'grant_id,user_id,client_id',
      authorization_codes_family_id_fkey: 'family_id',
    })
    expect(await foreignKeys('refresh_families')).toEqual({
      refresh_families_grant_fkey: 'grant_id,user_id,client_id',
    })
  })
})
