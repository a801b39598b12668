import { type Kysely, sql } from 'kysely'
import { type Standing, standingOf } from '../clients/standing.js'
import type { Database, Row } from '../db/database.js'

export interface Grant {
  id: string
  userId: string
  clientId: string
  scopes: string[]
  /** RFC 8707 resources the user consented to; empty when only the default audience was asked. */
  resources: string[]
  createdAt: Date
  updatedAt: Date
  lastUsedAt: Date | null
  revokedAt: Date | null
}

export function toGrant(row: Row<'grants'>): Grant {
  return {
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    scopes: row.scopes,
    resources: row.resources,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}

/** The user's live (unrevoked) grant for a client, if any. */
export async function findLiveGrant(
  db: Kysely<Database>,
  userId: string,
  clientId: string,
): Promise<Grant | undefined> {
  const row = await db
    .selectFrom('grants')
    .selectAll()
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return row && toGrant(row)
}

/** Whether the user's grant for a client has ended and no live one took its place. */
export async function hasOnlyRevokedGrants(
  db: Kysely<Database>,
  userId: string,
  clientId: string,
): Promise<boolean> {
  const rows = await db
    .selectFrom('grants')
    .select('revoked_at')
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .execute()
  return rows.length > 0 && rows.every((r) => r.revoked_at !== null)
}

/**
 * Inside a transaction: the client's registered scopes and redirect URIs when it exists and is
 * enabled, and then it stays so until the transaction ends (FOR SHARE: disableClient's and
 * updateClient's UPDATE wait for us, and see what we wrote). Taken before a grant is written, so that
 * a consent committing while the operator disables or narrows the client cannot leave a live grant
 * of a disabled client, or beyond its scopes, behind.
 */
export async function lockEnabledClient(
  trx: Kysely<Database>,
  id: string,
): Promise<{ scopes: string[]; redirectUris: string[]; standing: Standing } | undefined> {
  const row = await trx
    .selectFrom('clients')
    .select(['scopes', 'redirect_uris', 'kind', 'standing_override'])
    .where('id', '=', id)
    .where('disabled_at', 'is', null)
    .forShare()
    .executeTakeFirst()
  return (
    row && {
      scopes: row.scopes,
      redirectUris: row.redirect_uris,
      standing: standingOf({ kind: row.kind, standingOverride: row.standing_override }),
    }
  )
}

/**
 * Creates the live grant for (user, client), or widens it to the union of its scopes and `scopes`,
 * and of its resources and `resources`.
 * One statement: concurrent approvals meet at the partial unique index and end with one grant.
 */
export async function upsertGrant(
  db: Kysely<Database>,
  grant: { userId: string; clientId: string; scopes: string[]; resources?: string[] },
  now: Date,
): Promise<Grant> {
  const row = await db
    .insertInto('grants')
    .values({
      user_id: grant.userId,
      client_id: grant.clientId,
      scopes: grant.scopes,
      resources: grant.resources ?? [],
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'client_id'])
        .where('revoked_at', 'is', null)
        .doUpdateSet({
          scopes: sql<
            string[]
          >`array(select distinct s from unnest(grants.scopes || excluded.scopes) as s order by s)`,
          resources: sql<
            string[]
          >`array(select distinct r from unnest(grants.resources || excluded.resources) as r order by r)`,
          updated_at: now,
        }),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
  return toGrant(row)
}

/**
 * Records a use of the grant unless one after `staleBefore` is already recorded: last_used_at is for
 * people ("last used 3 minutes ago"), so busy grants are written at most once per window.
 */
export async function touchGrant(
  db: Kysely<Database>,
  grantId: string,
  now: Date,
  staleBefore: Date,
): Promise<void> {
  await db
    .updateTable('grants')
    .set({ last_used_at: now })
    .where('id', '=', grantId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', staleBefore)]))
    .execute()
}
