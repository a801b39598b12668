import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'

/** The facts of a refresh token an access token is issued from. */
export interface RefreshTokenIssue {
  familyId: string
  grantId: string
  userId: string
  clientId: string
  scopes: string[]
}

export interface RefreshRotation {
  tokenHash: string
  newTokenHash: string
  clientId: string
  /** null keeps the family's scopes (RFC 6749 §6). */
  requestedScopes: string[] | null
  now: Date
  newTokenExpiresAt: Date
  touchGrantBefore: Date
}

const rotationStatement = prepareStatement((_db, rotation: RefreshRotation) => {
  const requested = rotation.requestedScopes
  return sql<{ family_id: string; grant_id: string; user_id: string; scopes: string[] }>`
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
  `
})

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
  rotation: RefreshRotation,
): Promise<RefreshTokenIssue | undefined> {
  const [row] = await rotationStatement.execute(db, rotation)
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

/** Which one family to revoke: by id, the family a consumed code started, or a refresh token's own. */
export type FamilySelector =
  | { familyId: string }
  /** A consumed code presented again (RFC 6749 §4.1.2); unknown or unconsumed codes select nothing. */
  | { startedByCodeHash: string }
  /** RFC 7009: only when the token is `clientId`'s, so another client's token selects nothing. */
  | { refreshTokenHash: string; clientId: string }

/**
 * Revokes one refresh family (never its siblings) in one statement; true when it was live until now.
 * Its tokens need no marking of their own: every check of a refresh or access token asks its family.
 */
export async function revokeRefreshFamily(
  db: Kysely<Database>,
  selector: FamilySelector,
  now: Date,
  reason: string,
): Promise<boolean> {
  let query = db
    .updateTable('refresh_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('revoked_at', 'is', null)
  if ('familyId' in selector) {
    query = query.where('id', '=', selector.familyId)
  } else if ('startedByCodeHash' in selector) {
    query = query.where('id', '=', (eb) =>
      eb
        .selectFrom('authorization_codes')
        .select('family_id')
        .where('code_hash', '=', selector.startedByCodeHash)
        .where('consumed_at', 'is not', null),
    )
  } else {
    query = query
      .where('client_id', '=', selector.clientId)
      .where('id', '=', (eb) =>
        eb
          .selectFrom('refresh_tokens')
          .select('family_id')
          .where('token_hash', '=', selector.refreshTokenHash),
      )
  }
  const rows = await query.returning('id').execute()
  return rows.length > 0
}
