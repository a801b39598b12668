import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as m0007 from '../../migrations/0007_refresh_retry_window.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { createParty, exchangeCode, jwtClaims, tokenRequest } from '../helpers/fixtures.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => {
  await t.close()
})

async function schema() {
  const index = await sql<{ n: string }>`
    select count(*) as n from pg_indexes where indexname = 'refresh_tokens_one_live_per_family'`.execute(
    t.database.db,
  )
  const column = await sql<{ n: string }>`
    select count(*) as n from information_schema.columns
     where table_name = 'refresh_tokens' and column_name = 'window_answers'`.execute(t.database.db)
  return { uniqueHeadIndex: Number(index.rows[0]!.n), windowAnswers: Number(column.rows[0]!.n) }
}

describe('migration 0007: the refresh retry window', () => {
  it('goes down to 0006 (one head per family again, the newest kept) and up again', async () => {
    expect(await schema()).toEqual({ uniqueHeadIndex: 0, windowAnswers: 1 })
    const party = await createParty(t)
    const start = await exchangeCode(t, party)
    const refresh = () =>
      tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: start.refresh_token,
        client_id: party.client.id,
      })
    const first = (await refresh()).json()
    const familyId = jwtClaims(start.access_token).family_id as string
    // A branch as 0007's rule made one (a retry's own token); since 0013 a retry makes none.
    const retry = { refresh_token: randomToken() }
    await t.database.db
      .insertInto('refresh_tokens')
      .values({
        token_hash: sha256(retry.refresh_token),
        family_id: familyId,
        scopes: ['links:read'],
        created_at: t.clock.now(),
        expires_at: new Date(t.clock.now().getTime() + 600_000),
      })
      .execute()
    const heads = async () =>
      (
        await t.database.db
          .selectFrom('refresh_tokens')
          .select('token_hash')
          .where('family_id', '=', familyId)
          .where('rotated_at', 'is', null)
          .orderBy('token_hash')
          .execute()
      ).map((r) => r.token_hash)
    expect(await heads()).toEqual([sha256(first.refresh_token), sha256(retry.refresh_token)].sort())

    await t.database.db.transaction().execute((trx) => m0007.down(trx))
    expect(await schema()).toEqual({ uniqueHeadIndex: 1, windowAnswers: 0 })
    expect(await heads()).toHaveLength(1)

    await t.database.db.transaction().execute((trx) => m0007.up(trx))
    expect(await schema()).toEqual({ uniqueHeadIndex: 0, windowAnswers: 1 })
  })
})
