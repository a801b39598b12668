import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'
import { isSubset } from '../lib/scopes.js'
import { REFRESH_RETRY_ANSWERS } from './refresh-rotation.repository.js'

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

export { REFRESH_RETRY_ANSWERS }
export type { RefreshRotation, RefreshTokenIssue } from './refresh-rotation.repository.js'
export { rotateRefreshTokens, type RotatedRefreshToken } from './refresh-rotation.repository.js'
