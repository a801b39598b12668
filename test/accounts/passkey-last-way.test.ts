import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { countPasskeys, insertPasskey } from '../../src/accounts/passkey.repository.js'
import { findPasswordSignIn } from '../../src/accounts/user.repository.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'

/**
 * Issue 37 §3: the last way to sign in can never be removed, even by two requests at once. Two real
 * transactions race on PostgreSQL: a third holds the audit table locked so that both run up to their
 * audit row (past their checks) before either commits, which is when counts taken in separate
 * snapshots let both through. PGlite has one connection, so no two transactions overlap there.
 */

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
})
afterAll(async () => t.close())

async function userWithPasskeys(count: number, passwordSignIn: boolean) {
  const email = `last-way-${Math.random().toString(36).slice(2)}@example.com`
  const user = await t.services.users.createUser({ email, password: 'correct horse battery staple' })
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const passkey = await insertPasskey(t.database.db, {
      userId: user.id,
      credentialId: randomBytes(16).toString('base64url'),
      publicKey: randomBytes(77),
      signCount: 0,
      transports: [],
      backupEligible: false,
      backedUp: false,
      name: `key ${i}`,
      createdAt: new Date(),
    })
    ids.push(passkey.id)
  }
  if (!passwordSignIn) await t.services.passkeys.setPasswordSignIn(user.id, false)
  return { userId: user.id, ids }
}

/**
 * Runs `changes` at once while the audit table is locked; lets go once every one of them waits on a
 * lock (theirs on the audit table, or on one another), then answers how each ended.
 */
async function race(changes: Array<() => Promise<unknown>>): Promise<PromiseSettledResult<unknown>[]> {
  let letGo = () => {}
  const released = new Promise<void>((resolve) => (letGo = resolve))
  let locked = () => {}
  const holding = new Promise<void>((resolve) => (locked = resolve))
  const locker = t.database.db.transaction().execute(async (trx) => {
    await sql`lock table audit_events in exclusive mode`.execute(trx)
    locked()
    await released
  })
  await holding
  const running = Promise.allSettled(changes.map((change) => change()))
  for (;;) {
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(t.database.db)
    if (Number(rows[0]!.n) >= changes.length) break
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  letGo()
  await locker
  return running
}

const conflicts = (results: PromiseSettledResult<unknown>[]) =>
  results.filter((r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 409).length

describe.skipIf(testEngine() !== 'postgres')(
  'the last way to sign in, under concurrency (PostgreSQL)',
  () => {
    it('two removals of the last two passkeys of a passwordless user: one is refused', async () => {
      const { userId, ids } = await userWithPasskeys(2, false)
      const results = await race(ids.map((id) => () => t.services.passkeys.remove(userId, id)))
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      expect(conflicts(results)).toBe(1)
      expect(await countPasskeys(t.database.db, userId)).toBe(1)
    })

    it('a removal of the only passkey racing "password sign-in off": one is refused', async () => {
      const { userId, ids } = await userWithPasskeys(1, true)
      const results = await race([
        () => t.services.passkeys.setPasswordSignIn(userId, false),
        () => t.services.passkeys.remove(userId, ids[0]!),
      ])
      expect(conflicts(results)).toBe(1)
      const passkeys = await countPasskeys(t.database.db, userId)
      const password = await findPasswordSignIn(t.database.db, userId)
      expect(passkeys > 0 || password === true).toBe(true)
    })
  },
)
