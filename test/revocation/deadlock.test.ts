import { randomBytes, randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../helpers/app.js'
import { testEngine } from '../helpers/database.js'
import { exchangeCode } from '../helpers/fixtures.js'
import { expectInvariants } from '../helpers/invariants.js'

/**
 * A revocation of several grants losing a deadlock to the token endpoint (PostgreSQL only: PGlite
 * has one session, so nothing ever waits there). A batched code exchange share-locks the grants of
 * several requests in the order of their codes; a revocation locks the grants it ends in the order of
 * their ids. Here another session plays the exchange, made deterministic: it share-locks the grant
 * with the highest id, the revocation takes the others and waits for that one, and the session then
 * asks for the lowest: a deadlock. The session's deadlock_timeout is 3 s against the server's 1 s (and under its 10 s statement_timeout),
 * so PostgreSQL picks the revocation as the victim (a round where it could not is played again). Its whole transaction runs again from the start
 * once the session commits, and the operator or the user sees it succeed, audited once.
 */
describe.skipIf(testEngine() !== 'postgres')('a revocation chosen as a deadlock victim', () => {
  let t: TestApp
  let session: pg.Client
  let probe: pg.Client
  beforeAll(async () => {
    t = await buildTestApp()
    session = new pg.Client({ connectionString: t.database.url })
    probe = new pg.Client({ connectionString: t.database.url })
    await Promise.all([session.connect(), probe.connect()])
  })
  afterAll(async () => {
    await Promise.all([session.end(), probe.end()])
    await t.close()
  })

  const newUser = async () =>
    (
      await t.services.users.createUser({
        email: `deadlock-${randomBytes(4).toString('hex')}@example.com`,
        password: 'correct horse battery',
      })
    ).id
  const newClient = async () =>
    (await t.services.clients.createClient({ name: 'App', redirect_uris: ['https://app.example/cb'] })).id

  /**
   * Live grants for `pairs`, each with a refresh family, laid out against every order a plain UPDATE
   * could meet them in: inserted (the heap's order, and grants_client_id_idx's among one client's)
   * in (user, client) order (grants_live_user_client_key's), with ids descending. A revocation that
   * holds the lower grants while it waits for the highest has locked them in id order, not as found.
   * The grants' ids.
   */
  async function grantsAgainstScanOrder(pairs: { userId: string; clientId: string }[]): Promise<string[]> {
    // Sorted by PostgreSQL itself: client ids are text, in the database's collation.
    const { rows: sorted } = await probe.query<{ userId: string; clientId: string }>(
      `select user_id as "userId", client_id as "clientId"
         from unnest($1::uuid[], $2::text[]) as pair(user_id, client_id) order by user_id, client_id`,
      [pairs.map((p) => p.userId), pairs.map((p) => p.clientId)],
    )
    const ids = pairs.map(() => randomUUID()).sort((a, b) => compare(b, a))
    for (const [i, pair] of sorted.entries()) {
      await t.database.db
        .insertInto('grants')
        .values({ id: ids[i]!, user_id: pair.userId, client_id: pair.clientId, scopes: ['links:read'] })
        .execute()
      const grant = (await t.services.grants.findLiveGrant(pair.userId, pair.clientId))!
      const client = await t.services.clients.getClient(pair.clientId)
      await exchangeCode(t, { userId: pair.userId, client, grant })
    }
    return ids
  }

  /**
   * Runs `revoke` into the deadlock described above and returns what it answered once the session
   * has committed. Fails when the revocation had not locked the lower grants first (the probe).
   * `undefined` when the round proved nothing: PostgreSQL checks a waiting session for a deadlock once,
   * deadlock_timeout (1 s) after it began to wait; on a machine so busy that the session's second lock
   * came later than that, the revocation's check found no cycle yet, and the session became the
   * victim. The caller then plays another round with new grants.
   */
  async function revokeIntoDeadlock<T>(
    grantIds: string[],
    revoke: () => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    const ordered = [...grantIds].sort(compare)
    const [lowest, highest] = [ordered[0]!, ordered.at(-1)!]
    await session.query('begin')
    let revocation: Promise<{ value: T } | { error: unknown }> | undefined
    try {
      await session.query(`set local deadlock_timeout = '3s'`)
      // As the code exchange's statement locks a grant: `for share of g`.
      await session.query('select 1 from grants where id = $1 for share', [highest])
      const sessionPid = (await session.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
      revocation = revoke().then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      )
      await expect
        .poll(
          async () =>
            (
              await probe.query<{ n: string }>(
                `select count(*) as n from pg_stat_activity
                  where datname = current_database() and $1 = any(pg_blocking_pids(pid))`,
                [sessionPid],
              )
            ).rows[0]!.n,
          { timeout: 30_000, interval: 5 },
        )
        .toBe('1')
      // The revocation waits for the highest grant holding every lower one.
      await expect(
        probe.query('select 1 from grants where id = $1 for share nowait', [lowest]),
      ).rejects.toMatchObject({ code: '55P03' })
      // Closes the cycle; granted once PostgreSQL has rolled the revocation back.
      try {
        await session.query('select 1 from grants where id = $1 for share', [lowest])
      } catch (err) {
        if ((err as { code?: string }).code !== '40P01') throw err
        // This session was the victim (see above): the revocation went through without a retry.
        await session.query('rollback')
        await revocation
        return undefined
      }
      await session.query('commit')
    } catch (err) {
      await session.query('rollback')
      await revocation
      throw err
    }
    const outcome = await revocation
    if ('error' in outcome) throw outcome.error
    return { value: outcome.value }
  }

  /** Plays rounds of `round` until one proves something (at most three). */
  async function untilConclusive<T>(round: () => Promise<{ value: T } | undefined>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await round()
      if (outcome) return outcome.value
      if (attempt === 3) throw new Error('three rounds in a row, the revocation was never the victim')
    }
  }

  /** Every grant revoked with its family, and one grant.revoked audit row each, naming `reason`. */
  async function expectRevokedOnce(grantIds: string[], reason: string) {
    const db = t.database.db
    const grants = await db.selectFrom('grants').select('revoked_at').where('id', 'in', grantIds).execute()
    expect(grants.map((g) => g.revoked_at !== null)).toEqual(grantIds.map(() => true))
    const families = await db
      .selectFrom('refresh_families')
      .select(['revoked_at', 'revoked_reason'])
      .where('grant_id', 'in', grantIds)
      .execute()
    expect(families).toHaveLength(grantIds.length)
    for (const f of families)
      expect(f).toMatchObject({ revoked_at: expect.any(Date), revoked_reason: reason })
    const audited = await db
      .selectFrom('audit_events')
      .select('target_id')
      .where('event_type', '=', 'grant.revoked')
      .where('target_id', 'in', grantIds)
      .execute()
    expect(audited.map((a) => a.target_id).sort()).toEqual([...grantIds].sort())
    await expectInvariants(db)
  }

  /** The details of every `type` audit row about the client or user `id`. */
  async function auditDetails(type: string, about: 'client_id' | 'user_id', id: string) {
    const rows = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('event_type', '=', type)
      .where(about, '=', id)
      .execute()
    return rows.map((r) => r.details)
  }

  it('the operator disabling a client with several users still succeeds, audited once', async () => {
    const { clientId, grantIds, res } = await untilConclusive(async () => {
      const clientId = await newClient()
      const users = [await newUser(), await newUser(), await newUser()]
      const grantIds = await grantsAgainstScanOrder(users.map((userId) => ({ userId, clientId })))
      const outcome = await revokeIntoDeadlock(grantIds, () =>
        t.admin.inject({ method: 'DELETE', url: `/admin/clients/${clientId}`, headers: adminHeaders }),
      )
      return outcome && { value: { clientId, grantIds, res: outcome.value } }
    })
    expect(res.statusCode, res.body).toBe(200)
    await expectRevokedOnce(grantIds, 'client_disabled')
    expect(await auditDetails('client.disabled', 'client_id', clientId)).toEqual([
      expect.objectContaining({ grants_revoked: 3 }),
    ])
  })

  it("a password reset disconnecting the user's applications still succeeds, audited once", async () => {
    const { userId, grantIds, reset } = await untilConclusive(async () => {
      const userId = await newUser()
      const clients = [await newClient(), await newClient(), await newClient()]
      const grantIds = await grantsAgainstScanOrder(clients.map((clientId) => ({ userId, clientId })))
      const { url } = await t.services.users.issueResetLink(userId)
      const token = new URL(url).searchParams.get('token')!
      const outcome = await revokeIntoDeadlock(grantIds, () =>
        t.services.users.resetPassword(token, 'a new and longer password'),
      )
      return outcome && { value: { userId, grantIds, reset: outcome.value } }
    })
    expect(reset).toBe(true)
    await expectRevokedOnce(grantIds, 'password_reset')
    expect(await auditDetails('password.reset', 'user_id', userId)).toEqual([
      expect.objectContaining({ apps_disconnected: 3 }),
    ])
  })
})

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
