import { insertChallenge } from '../../src/accounts/webauthn-challenge.repository.js'
import { randomUUID } from 'node:crypto'
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertSession } from '../../src/accounts/session.repository.js'
import { insertUser } from '../../src/accounts/user.repository.js'
import { insertPasswordResetToken } from '../../src/accounts/password-reset.repository.js'
import { insertAuditRows } from '../../src/audit/audit.repository.js'
import { insertClient } from '../../src/clients/client.repository.js'
import type { Database } from '../../src/db/database.js'
import { insertEventStream } from '../../src/events/event-stream.repository.js'
import { upsertGrant } from '../../src/grants/grant.repository.js'
import { denyAccessToken } from '../../src/tokens/access-token-status.repository.js'
import { createHousekeepingService } from '../../src/housekeeping/housekeeping.service.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { randomToken, sha256 } from '../../src/lib/secrets.js'
import { insertPendingAuthorization } from '../../src/oauth/pending-authorization.repository.js'
import { insertPushedRequest } from '../../src/oauth/par.repository.js'
import { insertResourceServer } from '../../src/resource-servers/resource-server.repository.js'
import { createTestClock } from '../helpers/clock.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

/**
 * No housekeeping statement reads a whole table: each batch's select, and each delete, goes through
 * an index. EXPLAIN of the very statements a run sends, with sequential scans priced out of reach so
 * that a tiny test table cannot hide a missing index (the planner then still picks a Seq Scan only
 * when no index serves). PostgreSQL only: the plans are PostgreSQL's.
 */
let database: TestDatabase
let logged: Kysely<Database>
const statements: CompiledQuery[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  if (!database.url) return
  logged = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
    log: (event) => {
      if (event.level === 'query') statements.push(event.query)
    },
  })
})
afterAll(async () => {
  await logged?.destroy()
  await database.close()
})

/** One row of every kind a run deletes, all over by `at` + 30 days. */
async function seed(db: Kysely<Database>, at: Date): Promise<void> {
  const user = await insertUser(db, `${randomToken(6)}@example.com`, 'hash')
  const client = await insertClient(db, {
    id: randomToken(16),
    name: 'App',
    redirectUris: ['https://app.example/cb'],
    scopes: ['links:read'],
  })
  const grant = await upsertGrant(db, { userId: user.id, clientId: client.id, scopes: ['links:read'] }, at)
  const session = await insertSession(db, {
    tokenHash: sha256(randomToken()),
    userId: user.id,
    csrfSecret: 'c',
    createdAt: at,
    expiresAt: at,
  })
  const pending = await insertPendingAuthorization(db, {
    id: randomToken(16),
    clientId: client.id,
    redirectUri: 'https://app.example/cb',
    scopes: ['links:read'],
    state: null,
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    prompt: null,
    createdAt: at,
    expiresAt: at,
  })
  await db
    .updateTable('pending_authorizations')
    .set({ session_id: session })
    .where('id', '=', pending.id)
    .execute()
  const family = await db
    .insertInto('refresh_families')
    .values({
      grant_id: grant.id,
      user_id: user.id,
      client_id: client.id,
      scopes: ['links:read'],
      expires_at: at,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: sha256(randomToken()),
      family_id: family.id,
      scopes: ['links:read'],
      expires_at: at,
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
      created_at: at,
      expires_at: at,
      consumed_at: at,
      family_id: family.id,
    })
    .execute()
  await db.updateTable('refresh_families').set({ revoked_at: at }).where('id', '=', family.id).execute()
  await denyAccessToken(db, randomUUID(), at, at)
  const server = await insertResourceServer(db, { id: `rs_${randomToken(8)}`, name: 'API', secretHash: 'h' })
  await insertEventStream(db, { resourceServerId: server.id, now: at, idleSince: at, limit: 10 })
  await db.insertInto('dpop_proof_jtis').values({ key_hash: randomToken(), expires_at: at }).execute()
  await insertPasswordResetToken(db, {
    tokenHash: sha256(randomToken()),
    userId: user.id,
    createdAt: at,
    expiresAt: at,
  })
  await db
    .insertInto('device_authorizations')
    .values({
      id: randomUUID(),
      device_code_hash: sha256(randomToken()),
      user_code_hash: sha256(randomToken()),
      client_id: client.id,
      scopes: ['links:read'],
      resources: [],
      interval_seconds: 5,
      created_at: at,
      expires_at: at,
    })
    .execute()
  await insertChallenge(db, {
    challengeHash: sha256(randomToken()),
    purpose: 'sign_in',
    bindingHash: sha256(randomToken()),
    userId: null,
    createdAt: at,
    expiresAt: at,
  })
  await insertPushedRequest(db, {
    handleHash: sha256(randomToken()),
    clientId: client.id,
    parameters: { client_id: client.id },
    createdAt: at,
    expiresAt: at,
  })
  await insertAuditRows(db, [auditRow(new Date(at.getTime() - 500 * 24 * 3600 * 1000))])
}

const auditRow = (occurredAt: Date) => ({
  occurredAt,
  eventType: 'sign_in.succeeded',
  actorKind: 'anonymous',
  actorId: null,
  targetKind: null,
  targetId: null,
  userId: null,
  clientId: null,
  clientAddress: null,
  userAgent: null,
  requestId: null,
  details: {},
})

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)]

/** The nodes of the plan of `query`, with sequential scans disabled (never run: EXPLAIN only). */
async function plan(query: CompiledQuery): Promise<PlanNode[]> {
  return database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx)
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]),
    )
    return nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
  })
}

describe('housekeeping statements on PostgreSQL', () => {
  it('every select and delete of a run goes through an index; so do the foreign keys a delete cascades over', async (ctx) => {
    if (!database.url) ctx.skip()
    const at = new Date('2026-01-01T00:00:00Z')
    await seed(database.db, at)
    const clock = createTestClock(new Date(at.getTime() + 30 * 24 * 3600 * 1000))
    const config = loadConfig({})
    const housekeeping = createHousekeepingService({
      db: logged,
      clock,
      logger: createLogger('silent'),
      metrics: createMetrics(),
      config,
      eventStreamIdleSince: (now) => new Date(now.getTime() - config.eventStreamIdleSeconds * 1000),
    })
    const run = await housekeeping.run()
    expect(run.outcome).toBe('completed')
    for (const table of Object.keys(run.deleted) as (keyof typeof run.deleted)[])
      expect(run.deleted[table], table).toBeGreaterThanOrEqual(1)

    const work = statements.filter(
      (q) => /^\s*(\(?select|delete)/i.test(q.sql) && !q.sql.includes('advisory'),
    )
    expect(work.length).toBeGreaterThanOrEqual(9)
    const indexes = new Set<string>()
    for (const query of work) {
      const nodes = await plan(query)
      expect(
        nodes.filter((n) => n['Node Type'] === 'Seq Scan'),
        query.sql,
      ).toEqual([])
      for (const n of nodes) if (n['Index Name']) indexes.add(n['Index Name'])
    }
    expect([...indexes]).toEqual(
      expect.arrayContaining([
        'pending_authorizations_expires_at_idx',
        'sign_in_sessions_expires_at_idx',
        'refresh_families_revoked_at_idx',
        'refresh_families_expires_at_idx',
        'refresh_tokens_family_id_idx',
        'authorization_codes_unbound_expires_at_idx',
        'revoked_access_tokens_expires_at_idx',
        'revocation_events_until_idx',
        'event_streams_last_polled_at_idx',
        'dpop_proof_jtis_expires_at_idx',
        'password_reset_tokens_expires_at_idx',
        'webauthn_challenges_expires_at_idx',
        'pushed_authorization_requests_expires_at_idx',
        'device_authorizations_expires_at_idx',
        'audit_events_occurred_at_idx',
      ]),
    )

    // What ON DELETE CASCADE / SET NULL looks up in the referencing tables, per deleted row.
    const references = [
      ['authorization_codes', 'family_id', 'authorization_codes_family_id_idx'],
      ['refresh_tokens', 'family_id', 'refresh_tokens_family_id_idx'],
      ['pending_authorizations', 'session_id', 'pending_authorizations_session_id_idx'],
      ['revocation_event_acks', 'event_id', 'revocation_event_acks_event_id_idx'],
      ['revocation_event_acks', 'stream_id', 'revocation_event_acks_pkey'],
      ['password_reset_tokens', 'user_id', 'password_reset_tokens_user_id_idx'],
      ['passkeys', 'user_id', 'passkeys_user_idx'],
      ['webauthn_challenges', 'user_id', 'webauthn_challenges_user_id_idx'],
      ['pushed_authorization_requests', 'client_id', 'pushed_authorization_requests_client_id_idx'],
      ['device_authorizations', 'user_id', 'device_authorizations_user_id_idx'],
      ['device_authorizations', 'grant_id', 'device_authorizations_grant_id_idx'],
      ['device_authorizations', 'client_id', 'device_authorizations_client_id_idx'],
    ] as const
    for (const [table, column, index] of references) {
      const nodes = await plan(
        CompiledQuery.raw(`select 1 from ${table} where ${column} = $1`, [randomUUID()]),
      )
      expect(
        nodes.map((n) => n['Index Name']),
        `${table}.${column}`,
      ).toContain(index)
    }
  })
})
