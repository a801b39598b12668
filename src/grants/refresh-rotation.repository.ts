import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { columnsOf, prepareStatement } from '../db/prepared-statement.js'
import { servingResourcesOf } from './serving-resources.js'
import { type Standing, standingOf } from '../clients/standing.js'
import type { ClientKind, StandingOverride } from '../db/database.js'

/** The facts of a refresh token an access token is issued from. */
export interface RefreshTokenIssue {
  familyId: string
  grantId: string
  userId: string
  clientId: string
  scopes: string[]
  /** RFC 8707 resources of the authorization (the family's): what a token may be issued for. */
  resources: string[]
  /**
   * Read by the issuing statement when the token is asked for without `resource` and the
   * authorization names none: the enabled APIs serving one of `scopes` (servingResourcesOf), its
   * access token's `aud` list. Undefined otherwise.
   */
  servingResources?: string[] | undefined
  /** The client's standing, from the row the issuing statement read anyway (the access token's claim). */
  clientStanding: Standing
}

export interface RefreshRotation {
  tokenHash: string
  newTokenHash: string
  clientId: string
  /** null keeps the family's scopes (RFC 6749 §6). */
  requestedScopes: string[] | null
  /** The token request's `resource` (RFC 8707), null when none was named. */
  resource: string | null
  /** RFC 9449: the thumbprint of the request's DPoP key, null without a proof (see dpop-binding.ts). */
  dpopJkt: string | null
  now: Date
  /** A token spent after this instant may be presented again (the retry window); null: no window. */
  retryWindowStart: Date | null
  /**
   * The successor, sealed for the retry window (bound to tokenHash): stored on the presented token
   * when this rotates it, so that a retry is answered with the same successor. Null: no window.
   */
  successorSealed: string | null
  newTokenExpiresAt: Date
  touchGrantBefore: Date
}

/**
 * How many answers one spent refresh token gives inside the retry window (REFRESH_REUSE_WINDOW),
 * besides the rotation that spent it. Every answer carries the same successor refresh token (held
 * sealed on the spent token's row for the window), so the family never branches; each answer mints
 * an access token, and the bound caps how many a replay racing inside the window gets (SECURITY.md).
 */
export const REFRESH_RETRY_ANSWERS = 5

/** RefreshRotation as columns: the rotation statement takes a list of rotations (batchedWrite). */
const rotationColumns = (rotations: readonly RefreshRotation[]) =>
  columnsOf(rotations, {
    tokenHashes: (r) => r.tokenHash,
    newTokenHashes: (r) => r.newTokenHash,
    clientIds: (r) => r.clientId,
    /** Each rotation's requested scopes joined with spaces (a scope token has none), null for none. */
    requested: (r) => (r.requestedScopes === null ? null : r.requestedScopes.join(' ')),
    resources: (r) => r.resource,
    dpopJkts: (r) => r.dpopJkt,
    nows: (r) => r.now,
    retryWindowStarts: (r) => r.retryWindowStart,
    successorsSealed: (r) => r.successorSealed,
    newTokenExpiresAts: (r) => r.newTokenExpiresAt,
    touchGrantBefores: (r) => r.touchGrantBefore,
  })

/**
 * The rotation statement, over a list of rotations (one, or a batch of concurrent requests with
 * distinct tokens: batchedWrite). Each input row `i` meets the lines below exactly as a statement of
 * its own would; `n` is its place in the list.
 */
const rotationStatement = prepareStatement(
  (_db, r: ReturnType<typeof rotationColumns>) =>
    sql<{
      n: string
      family_id: string
      grant_id: string
      user_id: string
      scopes: string[]
      resources: string[]
      retried: boolean
      successor_sealed: string | null
      serving_resources: string[] | null
      client_kind: ClientKind
      standing_override: StandingOverride | null
    }>`
    with i as (
      select token_hash, new_token_hash, client_id, string_to_array(requested, ' ') as requested, resource,
             dpop_jkt, now, retry_window_start, successor_sealed, new_token_expires_at, touch_grant_before, n
        from unnest(${r.tokenHashes}::text[], ${r.newTokenHashes}::text[], ${r.clientIds}::text[],
                    ${r.requested}::text[], ${r.resources}::text[], ${r.dpopJkts}::text[], ${r.nows}::timestamptz[],
                    ${r.retryWindowStarts}::timestamptz[], ${r.successorsSealed}::text[],
                    ${r.newTokenExpiresAts}::timestamptz[], ${r.touchGrantBefores}::timestamptz[])
             with ordinality as input(token_hash, new_token_hash, client_id, requested, resource, dpop_jkt, now,
                                      retry_window_start, successor_sealed, new_token_expires_at,
                                      touch_grant_before, n)
    ), rotated as (
      -- A live token rotates (rotated_at is set, its successor sealed beside it for the window); a
      -- spent one inside the window answers again with that same successor (window_answers counts
      -- up). Either way under the token's row lock: concurrent requests re-check these lines against
      -- the row as the one before them left it.
      update refresh_tokens as t
         set rotated_at = coalesce(t.rotated_at, i.now),
             window_answers = t.window_answers + case when t.rotated_at is null then 0 else 1 end,
             successor_encrypted = case when t.rotated_at is null then i.successor_sealed
                                        else t.successor_encrypted end
        from i, refresh_families as f
        join grants as g on g.id = f.grant_id
        join clients as c on c.id = f.client_id
       where t.token_hash = i.token_hash
         and f.id = t.family_id
         -- refreshTokenRefusal's lines, in its order:
         and f.client_id = i.client_id
         and (t.rotated_at is null
              or t.rotated_at > i.retry_window_start
                 and t.window_answers < ${REFRESH_RETRY_ANSWERS}::int
                 and t.successor_encrypted is not null)
         and f.revoked_at is null
         and g.revoked_at is null
         and t.expires_at > i.now
         and f.expires_at > i.now
         and (i.requested is null or i.requested <@ f.scopes)
         and (i.resource = any(f.resources)
              or i.resource is null and cardinality(f.resources) <= 1)
         -- dpopBindingRefusal's lines:
         and (i.dpop_jkt is not null or not c.require_dpop)
         and (f.dpop_jkt is null or f.dpop_jkt = i.dpop_jkt)
      returning i.n, i.new_token_hash, i.requested, i.resource, i.now, i.new_token_expires_at, i.touch_grant_before,
                t.family_id, f.grant_id, f.user_id, f.scopes as family_scopes, f.expires_at as family_expires_at,
                f.resources, t.window_answers > 0 as retried, t.successor_encrypted,
                c.kind as client_kind, c.standing_override
    ), successor as (
      -- Only a rotation makes a token: a retry answers with the one its rotation made.
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select new_token_hash, family_id, coalesce(requested, family_scopes), now,
             least(new_token_expires_at, family_expires_at)
        from rotated where not retried
      returning token_hash, scopes
    ), touched as (
      -- Once per grant, whatever the number of its tokens in the list.
      update grants as g set last_used_at = use.now
        from (select grant_id, max(now) as now, max(touch_grant_before) as touch_grant_before
                from rotated group by grant_id) as use
       where g.id = use.grant_id
         and (g.last_used_at is null or g.last_used_at < use.touch_grant_before)
    )
    select rotated.n, rotated.family_id, rotated.grant_id, rotated.user_id,
           coalesce(successor.scopes, rotated.requested, rotated.family_scopes) as scopes, rotated.resources,
           rotated.retried, rotated.client_kind, rotated.standing_override,
           case when rotated.retried then rotated.successor_encrypted end as successor_sealed,
           case when rotated.resource is null and cardinality(rotated.resources) = 0
                then ${servingResourcesOf(sql`coalesce(successor.scopes, rotated.requested, rotated.family_scopes)`)}
           end as serving_resources
      from rotated left join successor on successor.token_hash = rotated.new_token_hash
  `,
)

/** What a rotation issued (or a retry answered again), as the rotation statement returns it. */
export type RotatedRefreshToken = RefreshTokenIssue & { retried: boolean; successorSealed: string | null }

/**
 * Rotates a refresh token in ONE statement (the hot path: one round trip, no explicit transaction).
 * The presented token is marked rotated only if it is unrotated, unexpired, this client's, in a live
 * family under a live grant, and the requested scopes are within the family's; the successor is
 * inserted by the same statement. Concurrent uses of one token serialise on its row: exactly one
 * rotates it, and seals its successor beside it. Inside the retry window the same statement answers
 * a spent token again (`retried`) with that sealed successor and inserts nothing, at most
 * REFRESH_RETRY_ANSWERS times, counted on the same row, so the bound holds across instances.
 * The grant's last_used_at is refreshed at most once per `touchGrantBefore` window, so busy grants
 * do not turn every refresh into a contended write. Takes a list of rotations of distinct tokens
 * (batchedWrite shares the statement among concurrent requests): the answer of each, in order
 * (undefined where it did not rotate).
 */
export async function rotateRefreshTokens(
  db: Kysely<Database>,
  rotations: readonly RefreshRotation[],
): Promise<(RotatedRefreshToken | undefined)[]> {
  const rows = await rotationStatement.execute(db, rotationColumns(rotations))
  const answers: (RotatedRefreshToken | undefined)[] = rotations.map(() => undefined)
  for (const row of rows) {
    const index = Number(row.n) - 1
    answers[index] = {
      familyId: row.family_id,
      grantId: row.grant_id,
      userId: row.user_id,
      clientId: rotations[index]!.clientId,
      scopes: row.scopes,
      resources: row.resources,
      servingResources: row.serving_resources ?? undefined,
      clientStanding: standingOf({ kind: row.client_kind, standingOverride: row.standing_override }),
      retried: row.retried,
      successorSealed: row.successor_sealed,
    }
  }
  return answers
}
