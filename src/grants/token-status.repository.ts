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
 * For each access token, whether the grant and the refresh family it names are both live and its jti
 * is not on the deny list: ONE statement for all of them, over primary keys (refresh_families.id,
 * grants.id, revoked_access_tokens.jti). A deleted user or client has no rows left (ON DELETE
 * CASCADE), and disabling a client revokes its grants in the same transaction, so neither needs a
 * join of its own. The references must be well-formed (uuids where uuids are due): one that is not
 * fails the whole statement.
 */
const liveAccessTokens = prepareStatement(
  (
    _db,
    refs: { familyIds: string[]; grantIds: string[]; clientIds: string[]; userIds: string[]; jtis: string[] },
  ) =>
    sql<{ i: number }>`
    select r.i::int as i
      from unnest(${refs.familyIds}::uuid[], ${refs.grantIds}::uuid[], ${refs.clientIds}::text[],
                  ${refs.userIds}::uuid[], ${refs.jtis}::uuid[])
             with ordinality as r (family_id, grant_id, client_id, user_id, jti, i)
      join refresh_families f on f.id = r.family_id
      join grants g on g.id = f.grant_id
     where f.grant_id = r.grant_id
       and f.client_id = r.client_id
       and f.user_id = r.user_id
       and f.revoked_at is null
       and g.revoked_at is null
       and not exists (select 1 from revoked_access_tokens x where x.jti = r.jti)
  `,
)

export async function areAccessTokensLive(
  db: Kysely<Database>,
  refs: readonly AccessTokenReference[],
): Promise<boolean[]> {
  const rows = await liveAccessTokens.execute(db, {
    familyIds: refs.map((r) => r.familyId),
    grantIds: refs.map((r) => r.grantId),
    clientIds: refs.map((r) => r.clientId),
    userIds: refs.map((r) => r.userId),
    jtis: refs.map((r) => r.jti),
  })
  const live = refs.map(() => false)
  for (const row of rows) live[row.i - 1] = true
  return live
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

const refreshTokenRecords = prepareStatement((db, { tokenHashes }: { tokenHashes: string[] }) =>
  db
    .selectFrom('refresh_tokens as t')
    .innerJoin('refresh_families as f', 'f.id', 't.family_id')
    .innerJoin('grants as g', 'g.id', 'f.grant_id')
    .innerJoin('clients as c', 'c.id', 'f.client_id')
    .select([
      't.token_hash',
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
    .where(sql<boolean>`t.token_hash = any(${tokenHashes}::text[])`),
)

/** The record of each refresh token (by its hash), in the hashes' order; one statement for all. */
export async function findRefreshTokenRecords(
  db: Kysely<Database>,
  tokenHashes: readonly string[],
): Promise<(RefreshTokenRecord | undefined)[]> {
  const rows = await refreshTokenRecords.execute(db, { tokenHashes: [...tokenHashes] })
  const byHash = new Map(rows.map((row) => [row.token_hash, row]))
  return tokenHashes.map((hash) => {
    const row = byHash.get(hash)
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
  })
}

export async function findRefreshTokenRecord(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<RefreshTokenRecord | undefined> {
  return (await findRefreshTokenRecords(db, [tokenHash]))[0]
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
