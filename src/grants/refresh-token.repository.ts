import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'
import { isSubset } from '../lib/scopes.js'
import { servingResourcesOf } from '../resource-servers/resource-server.repository.js'

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

const rotationStatement = prepareStatement((_db, rotation: RefreshRotation) => {
  const requested = rotation.requestedScopes
  return sql<{
    family_id: string
    grant_id: string
    user_id: string
    scopes: string[]
    resources: string[]
    retried: boolean
    successor_sealed: string | null
    serving_resources: string[] | null
  }>`
    with rotated as (
      -- A live token rotates (rotated_at is set, its successor sealed beside it for the window); a
      -- spent one inside the window answers again with that same successor (window_answers counts
      -- up). Either way under the token's row lock: concurrent requests re-check these lines against
      -- the row as the one before them left it.
      update refresh_tokens as t
         set rotated_at = coalesce(t.rotated_at, ${rotation.now}),
             window_answers = t.window_answers + case when t.rotated_at is null then 0 else 1 end,
             successor_encrypted = case when t.rotated_at is null then ${rotation.successorSealed}::text
                                        else t.successor_encrypted end
        from refresh_families as f
        join grants as g on g.id = f.grant_id
       where t.token_hash = ${rotation.tokenHash}
         and f.id = t.family_id
         -- refreshTokenRefusal's lines, in its order:
         and f.client_id = ${rotation.clientId}
         and (t.rotated_at is null
              or t.rotated_at > ${rotation.retryWindowStart}::timestamptz
                 and t.window_answers < ${REFRESH_RETRY_ANSWERS}::int
                 and t.successor_encrypted is not null)
         and f.revoked_at is null
         and g.revoked_at is null
         and t.expires_at > ${rotation.now}
         and f.expires_at > ${rotation.now}
         and (${requested}::text[] is null or ${requested}::text[] <@ f.scopes)
         and (${rotation.resource}::text = any(f.resources)
              or ${rotation.resource}::text is null and cardinality(f.resources) <= 1)
         -- dpopBindingRefusal's lines:
         and (${rotation.dpopJkt}::text is not null
              or not exists (select 1 from clients as c where c.id = f.client_id and c.require_dpop))
         and (f.dpop_jkt is null or f.dpop_jkt = ${rotation.dpopJkt}::text)
      returning t.family_id, f.grant_id, f.user_id, f.scopes as family_scopes, f.expires_at as family_expires_at,
                f.resources, t.window_answers > 0 as retried, t.successor_encrypted
    ), successor as (
      -- Only a rotation makes a token: a retry answers with the one its rotation made.
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select ${rotation.newTokenHash}, family_id, coalesce(${requested}::text[], family_scopes), ${rotation.now},
             least(${rotation.newTokenExpiresAt}::timestamptz, family_expires_at)
        from rotated where not retried
      returning family_id, scopes
    ), touched as (
      update grants set last_used_at = ${rotation.now}
       where id = (select grant_id from rotated)
         and (last_used_at is null or last_used_at < ${rotation.touchGrantBefore})
    )
    select rotated.family_id, rotated.grant_id, rotated.user_id,
           coalesce(successor.scopes, ${requested}::text[], rotated.family_scopes) as scopes, rotated.resources,
           rotated.retried, case when rotated.retried then rotated.successor_encrypted end as successor_sealed,
           case when ${rotation.resource}::text is null and cardinality(rotated.resources) = 0
                then ${servingResourcesOf(sql`coalesce(successor.scopes, ${requested}::text[], rotated.family_scopes)`)}
           end as serving_resources
      from rotated left join successor on successor.family_id = rotated.family_id
  `
})

/** A refresh token with everything that decides whether it is live, read in one statement. */
export interface RefreshTokenRecord {
  familyId: string
  grantId: string
  clientId: string
  userId: string
  scopes: string[]
  /** The family's scopes: what a refresh may narrow down from. */
  familyScopes: string[]
  /** The family's resources (RFC 8707): what a refresh may name. */
  familyResources: string[]
  createdAt: Date
  expiresAt: Date
  rotatedAt: Date | null
  /** Answers given inside the retry window since it rotated (at most REFRESH_RETRY_ANSWERS). */
  windowAnswers: number
  /** Its successor is held (sealed) for retries inside the window; false once wiped, or with no window. */
  successorHeld: boolean
  familyExpiresAt: Date
  familyRevokedAt: Date | null
  grantRevokedAt: Date | null
  clientDisabledAt: Date | null
  /** RFC 9449 §5: the key the family is bound to (null: unbound), and the client's require_dpop. */
  familyDpopJkt: string | null
  clientRequiresDpop: boolean
}

/** Why a refresh token is not live, or may not be rotated as asked. */
export type RefreshTokenRefusal =
  | 'other_client'
  | 'rotated'
  /** Spent inside the retry window, which has given all its REFRESH_RETRY_ANSWERS: not theft, no more. */
  | 'retries_exhausted'
  | 'revoked'
  | 'expired'
  | 'scope_exceeded'
  | 'resource_not_authorized'
  | 'resource_ambiguous'

/**
 * RFC 8707 §2.2 for a code or a refresh token: a named resource must be one of the authorization's;
 * naming none is fine when it named at most one (that one is the audience). The statements of both
 * grant types carry this line in SQL; this is its one TypeScript home.
 */
export function resourceRefusal(
  named: string | null,
  authorized: readonly string[],
): 'resource_not_authorized' | 'resource_ambiguous' | undefined {
  if (named !== null) return authorized.includes(named) ? undefined : 'resource_not_authorized'
  return authorized.length <= 1 ? undefined : 'resource_ambiguous'
}

/** What a token request asks of a refresh token, as the rotation statement receives it. */
export interface RefreshTokenUse {
  clientId: string
  requestedScopes: readonly string[] | null
  resource: string | null
  /** A token spent after this instant may be presented again; null: no retry window. */
  retryWindowStart: Date | null
}

/**
 * The rotation statement's predicates in TypeScript, line for line and in the same order: the one
 * home of the rule for the slow path (why did it not rotate?) and for introspection (is it live?),
 * which pass no `use` (so a spent token is never live, inside the retry window or not). The last
 * line has no twin in the statement: disabling a client revokes its grants in the same transaction,
 * so the grant's line refuses there first.
 */
export function refreshTokenRefusal(
  token: RefreshTokenRecord,
  now: Date,
  use?: RefreshTokenUse,
): RefreshTokenRefusal | undefined {
  if (use && token.clientId !== use.clientId) return 'other_client' // f.client_id = $clientId
  if (token.rotatedAt !== null) {
    // t.rotated_at is null or t.rotated_at > $retryWindowStart and t.window_answers < REFRESH_RETRY_ANSWERS
    //   and t.successor_encrypted is not null
    const inWindow = !!use?.retryWindowStart && token.rotatedAt.getTime() > use.retryWindowStart.getTime()
    if (!inWindow) return 'rotated'
    if (token.windowAnswers >= REFRESH_RETRY_ANSWERS || !token.successorHeld) return 'retries_exhausted'
  }
  if (token.familyRevokedAt !== null) return 'revoked' // f.revoked_at is null
  if (token.grantRevokedAt !== null) return 'revoked' // g.revoked_at is null
  if (token.expiresAt.getTime() <= now.getTime()) return 'expired' // t.expires_at > $now
  if (token.familyExpiresAt.getTime() <= now.getTime()) return 'expired' // f.expires_at > $now
  if (use?.requestedScopes && !isSubset(use.requestedScopes, token.familyScopes)) return 'scope_exceeded' // $requested is null or $requested <@ f.scopes
  const resourceLine = use && resourceRefusal(use.resource, token.familyResources) // $resource = any(f.resources) or …
  if (resourceLine) return resourceLine
  if (token.clientDisabledAt !== null) return 'revoked'
  return undefined
}

/**
 * Rotates a refresh token in ONE statement (the hot path: one round trip, no explicit transaction).
 * The presented token is marked rotated only if it is unrotated, unexpired, this client's, in a live
 * family under a live grant, and the requested scopes are within the family's; the successor is
 * inserted by the same statement. Concurrent uses of one token serialise on its row: exactly one
 * rotates it, and seals its successor beside it. Inside the retry window the same statement answers
 * a spent token again (`retried`) with that sealed successor and inserts nothing, at most
 * REFRESH_RETRY_ANSWERS times, counted on the same row, so the bound holds across instances.
 * The grant's last_used_at is refreshed at most once per `touchGrantBefore` window, so busy grants
 * do not turn every refresh into a contended write.
 */
export async function rotateRefreshToken(
  db: Kysely<Database>,
  rotation: RefreshRotation,
): Promise<(RefreshTokenIssue & { retried: boolean; successorSealed: string | null }) | undefined> {
  const [row] = await rotationStatement.execute(db, rotation)
  return (
    row && {
      familyId: row.family_id,
      grantId: row.grant_id,
      userId: row.user_id,
      clientId: rotation.clientId,
      scopes: row.scopes,
      resources: row.resources,
      servingResources: row.serving_resources ?? undefined,
      retried: row.retried,
      successorSealed: row.successor_sealed,
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

/** A family a revocation ended, with whose it was (for the audit trail). */
export interface RevokedFamily {
  id: string
  grantId: string
  userId: string
  clientId: string
}

/**
 * Revokes one refresh family (never its siblings) in one statement; the family when it was live until now.
 * Its tokens need no marking of their own: every check of a refresh or access token asks its family.
 */
export async function revokeRefreshFamily(
  db: Kysely<Database>,
  selector: FamilySelector,
  now: Date,
  reason: string,
): Promise<RevokedFamily | undefined> {
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
  const row = await query.returning(['id', 'grant_id', 'user_id', 'client_id']).executeTakeFirst()
  return row && { id: row.id, grantId: row.grant_id, userId: row.user_id, clientId: row.client_id }
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
      'f.resources as family_resources',
      't.created_at',
      't.expires_at',
      't.rotated_at',
      't.window_answers',
      sql<boolean>`t.successor_encrypted is not null`.as('successor_held'),
      'f.expires_at as family_expires_at',
      'f.revoked_at as family_revoked_at',
      'g.revoked_at as grant_revoked_at',
      'c.disabled_at as client_disabled_at',
      'f.dpop_jkt as family_dpop_jkt',
      'c.require_dpop as client_requires_dpop',
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
        familyResources: row.family_resources,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        rotatedAt: row.rotated_at,
        windowAnswers: row.window_answers,
        successorHeld: row.successor_held,
        familyExpiresAt: row.family_expires_at,
        familyRevokedAt: row.family_revoked_at,
        grantRevokedAt: row.grant_revoked_at,
        clientDisabledAt: row.client_disabled_at,
        familyDpopJkt: row.family_dpop_jkt,
        clientRequiresDpop: row.client_requires_dpop,
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
