import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'

/** What an access token names: checked against the database on every introspection. */
export interface AccessTokenReference {
  jti: string
  grantId: string
  familyId: string
  clientId: string
  userId: string
}

/**
 * True when the grant and the refresh family an access token names are both live and its jti is not
 * on the deny list: ONE statement over primary keys (refresh_families.id, grants.id,
 * revoked_access_tokens.jti). A deleted user or client has no rows left (ON DELETE CASCADE), and
 * disabling a client revokes its grants in the same transaction, so neither needs a join of its own
 * (planning, not execution, dominates this statement: every table less counts).
 */
const accessTokenLive = prepareStatement(
  (_db, ref: AccessTokenReference) =>
    sql<{ live: number }>`
    select 1 as live
      from refresh_families f
      join grants g on g.id = f.grant_id
     where f.id = ${ref.familyId}
       and f.grant_id = ${ref.grantId}
       and f.client_id = ${ref.clientId}
       and f.user_id = ${ref.userId}
       and f.revoked_at is null
       and g.revoked_at is null
       and not exists (select 1 from revoked_access_tokens r where r.jti = ${ref.jti})
  `,
)

export async function isAccessTokenLive(db: Kysely<Database>, ref: AccessTokenReference): Promise<boolean> {
  return (await accessTokenLive.execute(db, ref)).length > 0
}

/** A refresh token with everything that decides whether it is live, read in one statement. */
export interface RefreshTokenRecord {
  familyId: string
  grantId: string
  clientId: string
  userId: string
  scopes: string[]
  /** The family's scopes: what a refresh may narrow down from. */
  familyScopes: string[]
  createdAt: Date
  expiresAt: Date
  rotatedAt: Date | null
  familyExpiresAt: Date
  familyRevokedAt: Date | null
  grantRevokedAt: Date | null
  clientDisabledAt: Date | null
}

const refreshTokenRecord = prepareStatement((db, { tokenHash }: { tokenHash: string }) =>
  db
    .selectFrom('refresh_tokens as t')
    .innerJoin('refresh_families as f', 'f.id', 't.family_id')
    .innerJoin('grants as g', 'g.id', 'f.grant_id')
    .innerJoin('clients as c', 'c.id', 'f.client_id')
    .select([
      't.family_id',
      'f.grant_id',
      'f.client_id',
      'f.user_id',
      't.scopes',
      'f.scopes as family_scopes',
      't.created_at',
      't.expires_at',
      't.rotated_at',
      'f.expires_at as family_expires_at',
      'f.revoked_at as family_revoked_at',
      'g.revoked_at as grant_revoked_at',
      'c.disabled_at as client_disabled_at',
    ])
    .where('t.token_hash', '=', tokenHash),
)

export async function findRefreshTokenRecord(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<RefreshTokenRecord | undefined> {
  const [row] = await refreshTokenRecord.execute(db, { tokenHash })
  return (
    row && {
      familyId: row.family_id,
      grantId: row.grant_id,
      clientId: row.client_id,
      userId: row.user_id,
      scopes: row.scopes,
      familyScopes: row.family_scopes,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      rotatedAt: row.rotated_at,
      familyExpiresAt: row.family_expires_at,
      familyRevokedAt: row.family_revoked_at,
      grantRevokedAt: row.grant_revoked_at,
      clientDisabledAt: row.client_disabled_at,
    }
  )
}

/** Puts one access token on the deny list until it would have expired anyway. Idempotent. */
export async function denyAccessToken(
  db: Kysely<Database>,
  jti: string,
  expiresAt: Date,
  now: Date,
): Promise<void> {
  await db
    .insertInto('revoked_access_tokens')
    .values({ jti, expires_at: expiresAt, revoked_at: now })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute()
}
