import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'

/** The facts of a refresh token an access token is issued from. */
export interface RefreshTokenIssue {
  familyId: string
  grantId: string
  userId: string
  clientId: string
  scopes: string[]
}

/**
 * Rotates a refresh token in ONE statement (the hot path: one round trip, no explicit transaction).
 * The presented token is marked rotated only if it is unrotated, unexpired, this client's, in a live
 * family under a live grant, and the requested scopes are within the family's; the successor is
 * inserted by the same statement. Concurrent uses of one token serialise on its row: exactly one
 * gets a row back. The grant's last_used_at is refreshed at most once per `touchGrantBefore` window,
 * so busy grants do not turn every refresh into a contended write.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  rotation: {
    tokenHash: string
    newTokenHash: string
    clientId: string
    /** null keeps the family's scopes (RFC 6749 §6). */
    requestedScopes: string[] | null
    now: Date
    newTokenExpiresAt: Date
    touchGrantBefore: Date
  },
): Promise<RefreshTokenIssue | undefined> {
  const requested = rotation.requestedScopes
  const { rows } = await sql<{ family_id: string; grant_id: string; user_id: string; scopes: string[] }>`
    with rotated as (
      update refresh_tokens as t
         set rotated_at = ${rotation.now}
        from refresh_families as f
        join grants as g on g.id = f.grant_id
       where t.token_hash = ${rotation.tokenHash}
         and t.rotated_at is null
         and t.expires_at > ${rotation.now}
         and f.id = t.family_id
         and f.client_id = ${rotation.clientId}
         and f.revoked_at is null
         and f.expires_at > ${rotation.now}
         and g.revoked_at is null
         and (${requested}::text[] is null or ${requested}::text[] <@ f.scopes)
      returning t.family_id, f.grant_id, f.user_id, f.scopes as family_scopes, f.expires_at as family_expires_at
    ), successor as (
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select ${rotation.newTokenHash}, family_id, coalesce(${requested}::text[], family_scopes), ${rotation.now},
             least(${rotation.newTokenExpiresAt}::timestamptz, family_expires_at)
        from rotated
      returning family_id, scopes
    ), touched as (
      update grants set last_used_at = ${rotation.now}
       where id = (select grant_id from rotated)
         and (last_used_at is null or last_used_at < ${rotation.touchGrantBefore})
    )
    select rotated.family_id, rotated.grant_id, rotated.user_id, successor.scopes
      from rotated join successor on successor.family_id = rotated.family_id
  `.execute(db)
  const row = rows[0]
  return (
    row && {
      familyId: row.family_id,
      grantId: row.grant_id,
      userId: row.user_id,
      clientId: rotation.clientId,
      scopes: row.scopes,
    }
  )
}

/** Revokes one family (never its siblings); true when it was live until now. */
export async function revokeRefreshFamily(
  db: Kysely<Database>,
  familyId: string,
  now: Date,
  reason: string,
): Promise<boolean> {
  const rows = await db
    .updateTable('refresh_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', familyId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute()
  return rows.length > 0
}

/**
 * A consumed code presented again: revoke the family its first redemption started (RFC 6749 §4.1.2).
 * One statement; a code that is unknown, unconsumed or started no family changes nothing.
 */
export async function revokeFamilyStartedByCode(
  db: Kysely<Database>,
  codeHash: string,
  now: Date,
  reason: string,
): Promise<boolean> {
  const rows = await db
    .updateTable('refresh_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('revoked_at', 'is', null)
    .where('id', '=', (eb) =>
      eb
        .selectFrom('authorization_codes')
        .select('family_id')
        .where('code_hash', '=', codeHash)
        .where('consumed_at', 'is not', null),
    )
    .returning('id')
    .execute()
  return rows.length > 0
}
