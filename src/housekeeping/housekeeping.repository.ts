import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { ADVISORY_LOCKS, inAdvisoryLock } from '../db/advisory-lock.js'

/** The tables housekeeping deletes from, in the order of a run. */
export const HOUSEKEEPING_TABLES = [
  'pending_authorizations',
  'sign_in_sessions',
  'refresh_tokens',
  'refresh_families',
  'authorization_codes',
  'revoked_access_tokens',
  'revocation_events',
  'event_streams',
  'dpop_proof_jtis',
  'password_reset_tokens',
  'webauthn_challenges',
  'pushed_authorization_requests',
  'device_authorizations',
  'audit_events',
] as const

export type HousekeepingTable = (typeof HOUSEKEEPING_TABLES)[number]

/** Up to where each kind of row is over; housekeeping.service.ts says why each is what it is. */
export interface Cutoffs {
  /** Pending authorizations, sessions, codes without a family, deny-listed access tokens: expires_at ≤ this. */
  expiredBefore: Date
  familiesRevokedBefore: Date
  familiesExpiredBefore: Date
  /** Revocation events the feed no longer delivers: until ≤ this. */
  eventsUntil: Date
  /** Streams not polled since this. */
  streamsIdleSince: Date
  /** Audit events that happened before this (AUDIT_RETENTION ago). */
  auditBefore: Date
  /** Sealed successors of refresh tokens spent before this (their retry window is over): wiped. */
  successorsRotatedBefore: Date
}

export type Counts = Partial<Record<HousekeepingTable, number>>

/** One batch of one step: what it deleted, and whether a full batch suggests there is more. */
export interface BatchResult {
  deleted: Counts
  more: boolean
}

/**
 * Runs one batch in a transaction of its own that holds the housekeeping lock (src/db/advisory-lock.ts),
 * so two instances never delete at the same time; undefined (and nothing done) when another instance
 * holds it. A batch that loses a deadlock is run again from the start.
 */
export function inLockedBatch<T>(
  db: Kysely<Database>,
  batch: (trx: Kysely<Database>) => Promise<T>,
): Promise<T | undefined> {
  return inAdvisoryLock(db, ADVISORY_LOCKS.housekeeping, batch)
}

/**
 * Deletes up to `limit` rows of `table` that meet `over`, the ones that ended first: the select goes
 * through the index on `order` (migration 0005), the delete through the primary key `key`, and `over`
 * is checked again on the row being deleted.
 */
async function deleteOldest(
  trx: Kysely<Database>,
  table: HousekeepingTable,
  key: string,
  order: string,
  over: RawBuilder<boolean>,
  limit: number,
): Promise<number> {
  const t = sql.table(table)
  const result = await sql`
    delete from ${t} where ${sql.ref(key)} = any(array(
      select ${sql.ref(key)} from ${t} where ${over} order by ${sql.ref(order)} limit ${limit}))
      and ${over}`.execute(trx)
  return Number(result.numAffectedRows ?? 0)
}

/** A step of a run on one table: one bounded batch per call. */
const single =
  (
    table: HousekeepingTable,
    key: string,
    order: string,
    over: (c: Cutoffs) => RawBuilder<boolean>,
  ): ((trx: Kysely<Database>, c: Cutoffs, limit: number) => Promise<BatchResult>) =>
  async (trx, c, limit) => {
    const count = await deleteOldest(trx, table, key, order, over(c), limit)
    return { deleted: { [table]: count }, more: count === limit }
  }

/** Revoked families go some time after their revocation, others some time after their expiry. */
const familyIsOver = (c: Cutoffs) =>
  sql<boolean>`(revoked_at <= ${c.familiesRevokedBefore} or expires_at <= ${c.familiesExpiredBefore})`

/**
 * Up to `limit` families that are over, through their two indexes; then up to `limit` of their
 * tokens. Only when that left none are the families themselves deleted: a family with thousands of
 * rotations takes several batches, never one long one.
 */
async function deleteFamilies(trx: Kysely<Database>, c: Cutoffs, limit: number): Promise<BatchResult> {
  const { rows } = await sql<{ id: string }>`
    (select id from refresh_families where revoked_at <= ${c.familiesRevokedBefore} order by revoked_at limit ${limit})
    union
    (select id from refresh_families where expires_at <= ${c.familiesExpiredBefore} order by expires_at limit ${limit})
    limit ${limit}`.execute(trx)
  const ids = rows.map((r) => r.id)
  if (ids.length === 0) return { deleted: {}, more: false }
  const tokens = await sql`
    delete from refresh_tokens where token_hash = any(array(
      select token_hash from refresh_tokens where family_id = any(${ids}::uuid[]) limit ${limit}))`.execute(
    trx,
  )
  const tokenCount = Number(tokens.numAffectedRows ?? 0)
  if (tokenCount === limit) return { deleted: { refresh_tokens: tokenCount }, more: true }
  const families = await sql`
    delete from refresh_families where id = any(${ids}::uuid[]) and ${familyIsOver(c)}`.execute(trx)
  const familyCount = Number(families.numAffectedRows ?? 0)
  return {
    deleted: { refresh_tokens: tokenCount, refresh_families: familyCount },
    more: ids.length === limit,
  }
}

/**
 * Wipes up to `limit` sealed successors whose retry window is over (through the partial index of
 * migration 0013); the rows stay, as the theft signal needs them. Nothing is deleted, so it counts
 * nothing; a full batch asks for another.
 */
async function wipeHeldSuccessors(trx: Kysely<Database>, c: Cutoffs, limit: number): Promise<BatchResult> {
  const over = sql<boolean>`successor_encrypted is not null and rotated_at <= ${c.successorsRotatedBefore}`
  const result = await sql`
    update refresh_tokens set successor_encrypted = null where token_hash = any(array(
      select token_hash from refresh_tokens where ${over} order by rotated_at limit ${limit}))
      and ${over}`.execute(trx)
  return { deleted: {}, more: Number(result.numAffectedRows ?? 0) === limit }
}

/**
 * The steps of a run, in order. Families go before codes: a code that started a family is kept as
 * long as the family (a replay of the code revokes it); the family's deletion clears the code's
 * family_id, and the code goes in the same run.
 */
export const HOUSEKEEPING_STEPS = [
  {
    name: 'pending_authorizations',
    batch: single('pending_authorizations', 'id', 'expires_at', (c) => sql`expires_at <= ${c.expiredBefore}`),
  },
  {
    name: 'sign_in_sessions',
    batch: single('sign_in_sessions', 'id', 'expires_at', (c) => sql`expires_at <= ${c.expiredBefore}`),
  },
  { name: 'refresh_successors', batch: wipeHeldSuccessors },
  { name: 'refresh_families', batch: deleteFamilies },
  {
    name: 'authorization_codes',
    batch: single(
      'authorization_codes',
      'code_hash',
      'expires_at',
      (c) => sql`family_id is null and expires_at <= ${c.expiredBefore}`,
    ),
  },
  {
    name: 'revoked_access_tokens',
    batch: single('revoked_access_tokens', 'jti', 'expires_at', (c) => sql`expires_at <= ${c.expiredBefore}`),
  },
  {
    name: 'revocation_events',
    batch: single('revocation_events', 'id', 'until', (c) => sql`until <= ${c.eventsUntil}`),
  },
  {
    name: 'event_streams',
    batch: single(
      'event_streams',
      'id',
      'last_polled_at',
      (c) => sql`last_polled_at <= ${c.streamsIdleSince}`,
    ),
  },
  {
    // DPoP proofs seen (migration 0008): past expires_at the proof is refused for its age anyway.
    name: 'dpop_proof_jtis',
    batch: single('dpop_proof_jtis', 'key_hash', 'expires_at', (c) => sql`expires_at <= ${c.expiredBefore}`),
  },
  {
    name: 'password_reset_tokens',
    batch: single(
      'password_reset_tokens',
      'token_hash',
      'expires_at',
      (c) => sql`expires_at <= ${c.expiredBefore}`,
    ),
  },
  {
    // Passkey challenges handed out and never used (migration 0015): past expires_at none is accepted.
    name: 'webauthn_challenges',
    batch: single(
      'webauthn_challenges',
      'challenge_hash',
      'expires_at',
      (c) => sql`expires_at <= ${c.expiredBefore}`,
    ),
  },
  {
    // Pushed authorization requests never used (migration 0019): past expires_at none is accepted.
    name: 'pushed_authorization_requests',
    batch: single(
      'pushed_authorization_requests',
      'handle_hash',
      'expires_at',
      (c) => sql`expires_at <= ${c.expiredBefore}`,
    ),
  },
  {
    // Device authorization requests (migration 0018): past expires_at no poll or user code is accepted.
    name: 'device_authorizations',
    batch: single('device_authorizations', 'id', 'expires_at', (c) => sql`expires_at <= ${c.expiredBefore}`),
  },
  {
    // The one DELETE the append-only audit trail allows: rows past AUDIT_RETENTION. A serving role
    // without DELETE on it (docs/operating.md, "Database roles") leaves that to the owner.
    name: 'audit_events',
    batch: async (trx: Kysely<Database>, c: Cutoffs, limit: number): Promise<BatchResult> => {
      const { rows } = await sql<{
        allowed: boolean
      }>`select has_table_privilege('audit_events', 'DELETE') as allowed`.execute(trx)
      if (!rows[0]?.allowed) return { deleted: {}, more: false }
      return single(
        'audit_events',
        'id',
        'occurred_at',
        (k) => sql`occurred_at < ${k.auditBefore}`,
      )(trx, c, limit)
    },
  },
] as const

export type HousekeepingStep = (typeof HOUSEKEEPING_STEPS)[number]['name']
