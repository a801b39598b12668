import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { columnsOf, prepareStatement } from '../../src/db/prepared-statement.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.close()
})

describe('prepareStatement', () => {
  it('compiles once and runs with each call’s values, a name used twice in both places', async () => {
    const echo = prepareStatement(
      (_db, v: { a: string; b: number }) =>
        sql<{
          a: string
          b: number
          again: string
        }>`select ${v.a}::text as a, ${v.b}::int as b, ${v.a}::text as again`,
    )
    expect(echo.sql).toBe('select $1::text as a, $2::int as b, $3::text as again')
    expect(await echo.execute(database.db, { a: 'x', b: 1 })).toEqual([{ a: 'x', b: 1, again: 'x' }])
    expect(await echo.execute(database.db, { a: 'y', b: 2 })).toEqual([{ a: 'y', b: 2, again: 'y' }])
  })

  it('keeps constants of the built query and fills placeholders around them', async () => {
    const lookup = prepareStatement((db, v: { email: string }) =>
      db
        .selectFrom('users')
        .select('email')
        .where('email', '=', v.email)
        .where('password_hash', '!=', 'never-a-hash')
        .limit(1),
    )
    await database.db
      .insertInto('users')
      .values({ email: 'prepared@example.com', password_hash: 'h' })
      .execute()
    expect(await lookup.execute(database.db, { email: 'prepared@example.com' })).toEqual([
      { email: 'prepared@example.com' },
    ])
    expect(await lookup.execute(database.db, { email: 'nobody@example.com' })).toEqual([])
  })

  it('runs inside a transaction when given one', async () => {
    const insert = prepareStatement((db, v: { email: string }) =>
      db.insertInto('users').values({ email: v.email, password_hash: 'h' }).returning('email'),
    )
    await database.db
      .transaction()
      .execute(async (trx) => {
        expect(await insert.execute(trx, { email: 'rolled-back@example.com' })).toHaveLength(1)
        throw new Error('roll back')
      })
      .catch(() => {})
    const left = await database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'rolled-back@example.com')
      .execute()
    expect(left).toEqual([])
  })

  it('refuses to run without a value for one of its placeholders (it would be NULL)', async () => {
    const echo = prepareStatement(
      (_db, v: { a: string; b?: string }) => sql<{ a: string }>`select ${v.a}::text as a, ${v.b}::text as b`,
    )
    await expect(echo.execute(database.db, { a: 'x' })).rejects.toThrow(/no value for "b"/)
  })

  it('refuses, when it is built, a placeholder that does not become a parameter', () => {
    expect(() =>
      prepareStatement((db, v: { ids: string[] }) =>
        // Spread into `in (…)`, a placeholder is one value inside a list, not the list.
        db
          .selectFrom('users')
          .select('id')
          .where('id', 'in', v.ids.length > 0 ? ['x'] : []),
      ),
    ).toThrow(/"ids" is not a parameter/)
  })

  it('takes a list of inputs as columns (columnsOf), each input one row of unnest in its place', async () => {
    const inputs = [
      { name: 'b', tags: ['x', 'y'], at: new Date('2030-01-02T00:00:00Z'), note: undefined },
      { name: 'a', tags: [], at: new Date('2030-01-01T00:00:00Z'), note: 'kept' },
    ]
    const columns = (list: typeof inputs) =>
      columnsOf(list, {
        names: (i) => i.name,
        tags: (i) => i.tags.join(' '),
        ats: (i) => i.at,
        notes: (i) => i.note ?? null,
      })
    expect(columns(inputs)).toEqual({
      names: ['b', 'a'],
      tags: ['x y', ''],
      ats: [inputs[0]!.at, inputs[1]!.at],
      notes: [null, 'kept'],
    })
    const rows = prepareStatement(
      (_db, c: ReturnType<typeof columns>) =>
        sql<{ name: string; at: Date; note: string | null; n: number }>`
        select name, at, note, n::int as n
          from unnest(${c.names}::text[], ${c.ats}::timestamptz[], ${c.notes}::text[])
               with ordinality as input(name, at, note, n)
         order by n`,
    )
    expect(await rows.execute(database.db, columns(inputs))).toEqual([
      { name: 'b', at: inputs[0]!.at, note: null, n: 1 },
      { name: 'a', at: inputs[1]!.at, note: 'kept', n: 2 },
    ])
  })
})
