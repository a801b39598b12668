import { type Kysely, sql } from 'kysely'
import { expect } from 'vitest'
import type { Database } from '../../src/db/database.js'
import { REFRESH_RETRY_ANSWERS } from '../../src/grants/refresh-token.repository.js'

/**
 * DESIGN §4 and §5 as SQL over every table: each query returns the rows that break one rule, so an
 * empty result everywhere means the database is in a state the design allows. Races, faults and
 * fuzzing end with checkInvariants: whatever they did, nothing may be half-written or contradictory.
 */
const INVARIANTS: Record<string, string> = {
  'one live grant per user and client': `
    select user_id, client_id, count(*) as live
      from grants where revoked_at is null
     group by user_id, client_id having count(*) > 1`,

  'a revoked grant has no live refresh family': `
    select f.id as family_id, f.grant_id
      from refresh_families f join grants g on g.id = f.grant_id
     where g.revoked_at is not null and f.revoked_at is null`,

  'a disabled client has no live grant': `
    select g.id as grant_id, g.client_id
      from grants g join clients c on c.id = g.client_id
     where c.disabled_at is not null and g.revoked_at is null`,

  'a family belongs to its grant: same user, same client, scopes within the grant': `
    select f.id as family_id
      from refresh_families f join grants g on g.id = f.grant_id
     where f.user_id <> g.user_id or f.client_id <> g.client_id or not (f.scopes <@ g.scopes)`,

  'a family was started by exactly one consumed code of its grant, at that moment': `
    select f.id as family_id,
           (select count(*) from authorization_codes c
             where c.family_id = f.id and c.consumed_at = f.created_at and c.grant_id = f.grant_id
               and c.user_id = f.user_id and c.client_id = f.client_id and c.scopes = f.scopes) as codes
      from refresh_families f
     where (select count(*) from authorization_codes c
             where c.family_id = f.id and c.consumed_at = f.created_at and c.grant_id = f.grant_id
               and c.user_id = f.user_id and c.client_id = f.client_id and c.scopes = f.scopes) <> 1`,

  'a code names a family only once consumed': `
    select code_hash from authorization_codes where family_id is not null and consumed_at is null`,

  'a code belongs to its grant: same user, same client, scopes within the grant': `
    select c.code_hash
      from authorization_codes c join grants g on g.id = c.grant_id
     where c.user_id <> g.user_id or c.client_id <> g.client_id or not (c.scopes <@ g.scopes)`,

  // A rotation swaps the family's head for its successor; an answer inside the retry window
  // (REFRESH_REUSE_WINDOW) hands out that same successor (issue 31), so a family never branches.
  'every family has exactly one unrotated refresh token (one lineage, no branches)': `
    select f.id as family_id, count(t.token_hash) filter (where t.rotated_at is null) as heads
      from refresh_families f left join refresh_tokens t on t.family_id = f.id
     group by f.id
    having count(t.token_hash) filter (where t.rotated_at is null) <> 1`,

  'a successor is held (sealed) only by a spent token, never in clear': `
    select token_hash from refresh_tokens
     where successor_encrypted is not null
       and (rotated_at is null or successor_encrypted !~ '^[A-Za-z0-9_-]{16}:v1\\.[A-Za-z0-9_-]+$')`,

  'a refresh token answers inside the retry window only once spent, and at most REFRESH_RETRY_ANSWERS times': `
    select token_hash, rotated_at, window_answers from refresh_tokens
     where window_answers < 0 or window_answers > ${REFRESH_RETRY_ANSWERS}
        or (rotated_at is null and window_answers <> 0)`,

  'every rotated refresh token has its successor, made in the same instant': `
    select t.token_hash, t.family_id
      from refresh_tokens t
     where t.rotated_at is not null
       and not exists (select 1 from refresh_tokens s
                        where s.family_id = t.family_id and s.token_hash <> t.token_hash
                          and s.created_at = t.rotated_at)`,

  'a refresh token is within its family: scopes and lifetime': `
    select t.token_hash
      from refresh_tokens t join refresh_families f on f.id = t.family_id
     where not (t.scopes <@ f.scopes) or t.expires_at > f.expires_at`,

  'nothing outlives its user (sessions, grants, codes, families)': `
    select 'sign_in_sessions' as t, id::text from sign_in_sessions s
     where not exists (select 1 from users u where u.id = s.user_id)
    union all select 'grants', id::text from grants g
     where not exists (select 1 from users u where u.id = g.user_id)
    union all select 'authorization_codes', code_hash from authorization_codes c
     where not exists (select 1 from users u where u.id = c.user_id)
    union all select 'refresh_families', id::text from refresh_families f
     where not exists (select 1 from users u where u.id = f.user_id)`,

  'at most one active signing key': `
    select count(*) as active from signing_keys where retired_at is null having count(*) > 1`,
}

export type InvariantViolations = Record<string, unknown[]>

/** Every broken rule with the rows that break it; {} when the database is consistent. */
export async function findInvariantViolations(db: Kysely<Database>): Promise<InvariantViolations> {
  const violations: InvariantViolations = {}
  for (const [rule, query] of Object.entries(INVARIANTS)) {
    const { rows } = await sql.raw(query).execute(db)
    if (rows.length > 0) violations[rule] = rows
  }
  return violations
}

/** Fails the test, naming every broken rule and its rows. */
export async function expectInvariants(db: Kysely<Database>): Promise<void> {
  expect(await findInvariantViolations(db)).toEqual({})
}

/** Rows that still name a user, table by table (all zero once the user is deleted). */
export async function rowsOfUser(db: Kysely<Database>, userId: string): Promise<Record<string, number>> {
  const { rows } = await sql<{ table: string; n: string }>`
    select 'users' as table, count(*) as n from users where id = ${userId}
    union all select 'sign_in_sessions', count(*) from sign_in_sessions where user_id = ${userId}
    union all select 'grants', count(*) from grants where user_id = ${userId}
    union all select 'authorization_codes', count(*) from authorization_codes where user_id = ${userId}
    union all select 'refresh_families', count(*) from refresh_families where user_id = ${userId}
    union all select 'refresh_tokens', count(*) from refresh_tokens t
      join refresh_families f on f.id = t.family_id where f.user_id = ${userId}
  `.execute(db)
  return Object.fromEntries(rows.map((r) => [r.table, Number(r.n)]))
}
