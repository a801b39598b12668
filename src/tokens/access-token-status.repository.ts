import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { columnsOf, prepareStatement } from '../db/prepared-statement.js'

/** What an access token names: checked against the database on every introspection. */
export interface AccessTokenReference {
  jti: string
  grantId: string
  familyId: string
  clientId: string
  userId: string
}

/** AccessTokenReferences as columns: the statement takes a list of them. */
const referenceColumns = (refs: readonly AccessTokenReference[]) =>
  columnsOf(refs, {
    familyIds: (r) => r.familyId,
    grantIds: (r) => r.grantId,
    clientIds: (r) => r.clientId,
    userIds: (r) => r.userId,
    jtis: (r) => r.jti,
  })

/**
 * For each access token, whether the grant and the refresh family it names are both live and its jti
 * is not on the deny list: ONE statement for all of them, over primary keys (refresh_families.id,
 * grants.id, revoked_access_tokens.jti). A deleted user or client has no rows left (ON DELETE
 * CASCADE), and disabling a client revokes its grants in the same transaction, so neither needs a
 * join of its own. The references must be well-formed (uuids where uuids are due): one that is not
 * fails the whole statement.
 */
const liveAccessTokens = prepareStatement(
  (_db, refs: ReturnType<typeof referenceColumns>) =>
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
  const rows = await liveAccessTokens.execute(db, referenceColumns(refs))
  const live = refs.map(() => false)
  for (const row of rows) live[row.i - 1] = true
  return live
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
