import { type Kysely, sql } from 'kysely'
import type { Database, Row } from '../db/database.js'
import { prepareStatement } from '../db/prepared-statement.js'

export interface AuthorizationCode {
  codeHash: string
  clientId: string
  userId: string
  grantId: string
  redirectUri: string
  scopes: string[]
  codeChallenge: string
  /** RFC 8707 resource indicators the code is for (copied to its refresh family). */
  resources: string[]
  createdAt: Date
  expiresAt: Date
  consumedAt: Date | null
  familyId: string | null
  /** RFC 9449 §10: the DPoP key thumbprint the authorization request named (dpop_jkt); null: none. */
  dpopJkt: string | null
}

function toAuthorizationCode(row: Row<'authorization_codes'>): AuthorizationCode {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    userId: row.user_id,
    grantId: row.grant_id,
    redirectUri: row.redirect_uri,
    scopes: row.scopes,
    codeChallenge: row.code_challenge,
    resources: row.resources,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
    familyId: row.family_id,
    dpopJkt: row.dpop_jkt,
  }
}

export async function insertAuthorizationCode(
  db: Kysely<Database>,
  code: Omit<AuthorizationCode, 'consumedAt' | 'familyId' | 'resources' | 'dpopJkt'> & {
    resources?: string[]
    dpopJkt?: string | null
  },
): Promise<void> {
  await db
    .insertInto('authorization_codes')
    .values({
      code_hash: code.codeHash,
      client_id: code.clientId,
      user_id: code.userId,
      grant_id: code.grantId,
      redirect_uri: code.redirectUri,
      scopes: code.scopes,
      code_challenge: code.codeChallenge,
      resources: code.resources ?? [],
      dpop_jkt: code.dpopJkt ?? null,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
    })
    .execute()
}

export async function findAuthorizationCode(
  db: Kysely<Database>,
  codeHash: string,
): Promise<AuthorizationCode | undefined> {
  const row = await db
    .selectFrom('authorization_codes')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .executeTakeFirst()
  return row && toAuthorizationCode(row)
}

export type CodeUnderLiveGrant = Omit<
  AuthorizationCode,
  'consumedAt' | 'familyId' | 'grantId' | 'resources' | 'dpopJkt'
> & {
  resources?: string[]
  /** RFC 9449 §10: the authorization request's dpop_jkt; null or left out: none. */
  dpopJkt?: string | null
}

const CODE_COLUMNS = [
  'code_hash',
  'client_id',
  'user_id',
  'grant_id',
  'redirect_uri',
  'scopes',
  'code_challenge',
  'created_at',
  'expires_at',
  'dpop_jkt',
] as const

/**
 * Two statements from one definition: a request that names no resource keeps the statement it had
 * before resource indicators (the benchmarked path costs what it cost); one that names resources also
 * stores them on the code and requires the grant to cover them.
 */
const codeUnderLiveGrantStatement = (withResources: boolean) =>
  prepareStatement((db, code: CodeUnderLiveGrant) => {
    const insert = db
      .insertInto('authorization_codes')
      .columns(withResources ? [...CODE_COLUMNS, 'resources'] : CODE_COLUMNS)
    const covering = db
      .selectFrom('grants')
      .select((eb) => [
        eb.val(code.codeHash).as('code_hash'),
        'grants.client_id',
        'grants.user_id',
        'grants.id',
        eb.val(code.redirectUri).as('redirect_uri'),
        sql<string[]>`${code.scopes}::text[]`.as('scopes'),
        eb.val(code.codeChallenge).as('code_challenge'),
        eb.val(code.createdAt).as('created_at'),
        eb.val(code.expiresAt).as('expires_at'),
        sql<string | null>`${code.dpopJkt}::text`.as('dpop_jkt'),
      ])
      .where('grants.user_id', '=', code.userId)
      .where('grants.client_id', '=', code.clientId)
      .where('grants.revoked_at', 'is', null)
      .where(sql<boolean>`grants.scopes @> ${code.scopes}::text[]`)
    const select = withResources
      ? covering
          .select(sql<string[]>`${code.resources}::text[]`.as('resources'))
          .where(sql<boolean>`grants.resources @> ${code.resources}::text[]`)
      : covering
    return insert.expression(select).returning('grant_id')
  })
const codeUnderLiveGrant = codeUnderLiveGrantStatement(false)
const codeUnderLiveGrantForResources = codeUnderLiveGrantStatement(true)

/**
 * Inserts a code under the user's live grant for the client, only if that grant covers every
 * requested scope and resource: one statement, no row lock, so concurrent authorizations of one user do not queue.
 * A revocation committing just after is still safe: redemption refuses a code of a revoked grant.
 * Returns the grant's id, or undefined (and nothing written) when no live grant covers the scopes.
 */
export async function insertAuthorizationCodeUnderLiveGrant(
  db: Kysely<Database>,
  code: CodeUnderLiveGrant,
): Promise<string | undefined> {
  const statement = code.resources?.length ? codeUnderLiveGrantForResources : codeUnderLiveGrant
  const [row] = await statement.execute(db, { ...code, dpopJkt: code.dpopJkt ?? null })
  return row?.grant_id
}

export { type CodeForSession, insertAuthorizationCodesForSessions } from './code-for-session.repository.js'
