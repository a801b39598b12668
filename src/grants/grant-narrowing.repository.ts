import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import type { RevokedGrant } from './grant-revocation.repository.js'

/** Why the families and grants below were revoked (refresh_families.revoked_reason). */
export const NARROWED_REASON = 'client_scopes_narrowed'

/** What narrowing a client's registration did to what had been granted under it. */
export interface ClientNarrowing {
  /** Unredeemed codes for a removed scope or a removed redirect URI, expired now. */
  codesExpired: number
  /** Grants left with none of their scopes: revoked (a grant-revoked event each). */
  grantsRevoked: RevokedGrant[]
  /** Grants that keep some scopes: narrowed to those, no event (their tokens go by family below). */
  grantsNarrowed: number
  /** Refresh families that held a removed scope: revoked (a family-revoked event each, unless their grant's covers it). */
  familiesRevoked: number
  /** Of those, the ones whose refresh tokens moved to a new family with the remaining scopes. */
  familiesContinued: number
}

/** `column`'s scopes that are still in `remaining`, in their order (text[] ∩ text[]). */
const kept = (column: string, remaining: readonly string[]) =>
  sql<string[]>`array(select s from unnest(${sql.ref(column)}) as s where s = any(${[...remaining]}::text[]))`

/**
 * Applies a client's narrower registration to what was granted under it, inside the caller's
 * transaction (which has locked the client row). What a removed scope reached stops working at once,
 * like a revocation, and is announced on the revocation feed:
 *
 * - An access token carries its grant_id and family_id, and the feed announces ids, not scopes. So
 *   every live refresh family holding a removed scope is revoked (a family-revoked event: its access
 *   tokens are refused by introspection and by APIs following the feed). When some of its scopes
 *   remain, its refresh tokens (rotated ones too, so that reuse detection keeps working) first move
 *   to a new family with the remaining scopes: the app's refresh token keeps working and yields only
 *   those; the access tokens issued before the change are refused.
 * - A grant left with no scope is revoked with its families (one grant-revoked event); one that keeps
 *   some is narrowed, so remembered consent no longer covers what was removed.
 * - Unredeemed codes for a removed scope or redirect URI expire now.
 *
 * Locks are taken in the order a code exchange and a refresh take theirs (code or token row, then
 * the grant), so neither can deadlock with this.
 */
export async function narrowClientGrants(
  trx: Kysely<Database>,
  clientId: string,
  remainingScopes: readonly string[],
  removedRedirectUris: readonly string[],
  now: Date,
): Promise<ClientNarrowing> {
  const remaining = [...remainingScopes]
  const codes = await trx
    .updateTable('authorization_codes')
    .set({ expires_at: now })
    .where('client_id', '=', clientId)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      eb.or([
        eb.not(sql<boolean>`scopes <@ ${remaining}::text[]`),
        sql<boolean>`redirect_uri = any(${[...removedRedirectUris]}::text[])`,
      ]),
    )
    .executeTakeFirst()

  const families = await trx
    .selectFrom('refresh_families as f')
    .innerJoin('grants as g', 'g.id', 'f.grant_id')
    .select(['f.id', kept('f.scopes', remaining).as('kept')])
    .where('f.client_id', '=', clientId)
    .where('f.revoked_at', 'is', null)
    .where('f.expires_at', '>', now)
    .where('g.revoked_at', 'is', null)
    .where(sql<boolean>`not (f.scopes <@ ${remaining}::text[])`)
    .forUpdate('f')
    .execute()
  const continued = families.filter((f) => f.kept.length > 0)
  if (continued.length > 0)
    await continueFamilies(
      trx,
      continued.map((f) => f.id),
      remaining,
    )

  const grantsRevoked = await revokeGrantsLeftEmpty(trx, clientId, remaining, now)
  const narrowed = await trx
    .updateTable('grants')
    .set({ scopes: kept('scopes', remaining), updated_at: now })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .where(sql<boolean>`not (scopes <@ ${remaining}::text[])`)
    .executeTakeFirst()

  const familiesRevoked = families.length
    ? await trx
        .updateTable('refresh_families')
        .set({ revoked_at: now, revoked_reason: NARROWED_REASON })
        .where(
          'id',
          'in',
          families.map((f) => f.id),
        )
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
    : { numUpdatedRows: 0n }

  return {
    codesExpired: Number(codes.numUpdatedRows),
    grantsRevoked,
    grantsNarrowed: Number(narrowed.numUpdatedRows),
    familiesRevoked: Number(familiesRevoked.numUpdatedRows),
    familiesContinued: continued.length,
  }
}

/**
 * New families with the remaining scopes (same grant, user, resources, start and absolute expiry),
 * and every refresh token of the old ones moved over, its scopes narrowed. A refresh committing while
 * this runs may add a successor to an old family after a statement's snapshot: the move repeats until
 * nothing is left behind (every token it moved stays locked until commit, so that ends).
 */
async function continueFamilies(trx: Kysely<Database>, oldIds: string[], remaining: string[]) {
  const newIds = oldIds.map(() => randomUUID())
  const pairs = sql`unnest(${oldIds}::uuid[], ${newIds}::uuid[]) as m (old_id, new_id)`
  // Every column copied (through a jsonb image of the row), so that whatever a family records (its
  // binding, its lifetimes, columns added later) carries over; only the id and the scopes change.
  await sql`
    insert into refresh_families
    select r.*
      from ${pairs}
      join refresh_families f on f.id = m.old_id
     cross join lateral jsonb_populate_record(null::refresh_families,
             to_jsonb(f) || jsonb_build_object('id', m.new_id, 'scopes', to_jsonb(${kept('f.scopes', remaining)}))) r
  `.execute(trx)
  for (let round = 0; round < 20; round++) {
    const moved = await sql`
      update refresh_tokens t set family_id = m.new_id, scopes = ${kept('t.scopes', remaining)}
        from ${pairs} where t.family_id = m.old_id
    `.execute(trx)
    if (!moved.numAffectedRows) break
  }
  // A replayed code revokes the family it started: that is now the new one.
  await sql`
    update authorization_codes c set family_id = m.new_id from ${pairs} where c.family_id = m.old_id
  `.execute(trx)
}

/** Revokes the client's live grants that keep none of their scopes, with their families. */
async function revokeGrantsLeftEmpty(
  trx: Kysely<Database>,
  clientId: string,
  remaining: string[],
  now: Date,
): Promise<RevokedGrant[]> {
  const rows = await trx
    .updateTable('grants')
    .set({ revoked_at: now })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .where(sql<boolean>`not (scopes && ${remaining}::text[])`)
    .returning(['id', 'user_id as userId', 'client_id as clientId'])
    .execute()
  const ids = rows.map((r) => r.id)
  if (ids.length > 0)
    await trx
      .updateTable('refresh_families')
      .set({ revoked_at: now, revoked_reason: NARROWED_REASON })
      .where('grant_id', 'in', ids)
      .where('revoked_at', 'is', null)
      .execute()
  return rows
}

/** What deleting a resource server did to what was granted for its resource. */
export interface ResourceForgotten {
  /** Live refresh families whose authorization named it: revoked (a family-revoked event each). */
  familiesRevoked: number
  /** Live grants that named it: the resource removed, so that consent is asked again. */
  grantsNarrowed: number
  /** Unredeemed codes naming it, expired now. */
  codesExpired: number
}

/**
 * A resource server is deleted: nothing granted for its resource identifier may outlive it, or come
 * back to life if someone registers the identifier again. Inside the caller's transaction. Families
 * are revoked whole (an access token names its family, not its audience, on the feed), so a family
 * that named other resources too ends with it: the app authorizes again.
 */
export async function forgetResourceInGrants(
  trx: Kysely<Database>,
  resource: string,
  now: Date,
): Promise<ResourceForgotten> {
  const named = sql<boolean>`${resource}::text = any(resources)`
  const codes = await trx
    .updateTable('authorization_codes')
    .set({ expires_at: now })
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .where(named)
    .executeTakeFirst()
  const families = await trx
    .updateTable('refresh_families')
    .set({ revoked_at: now, revoked_reason: 'resource_server_deleted' })
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .where(named)
    .executeTakeFirst()
  const grants = await trx
    .updateTable('grants')
    .set({ resources: sql<string[]>`array_remove(resources, ${resource}::text)`, updated_at: now })
    .where('revoked_at', 'is', null)
    .where(named)
    .executeTakeFirst()
  return {
    familiesRevoked: Number(families.numUpdatedRows),
    grantsNarrowed: Number(grants.numUpdatedRows),
    codesExpired: Number(codes.numUpdatedRows),
  }
}
