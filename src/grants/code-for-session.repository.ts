import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { columnsOf, prepareStatement } from '../db/prepared-statement.js'

/** A returning user's code (authorization-code.repository's CodeUnderLiveGrant, by session, not user). */
export interface CodeForSession {
  codeHash: string
  clientId: string
  redirectUri: string
  scopes: string[]
  codeChallenge: string
  createdAt: Date
  expiresAt: Date
  /** Not stored by this statement: a request naming resources takes the long way. */
  resources?: string[]
  /** RFC 9449 §10: the authorization request's dpop_jkt; null or left out: none. */
  dpopJkt?: string | null
  sessionTokenHash: string
}

/** CodeForSession as columns: the statement takes a list of codes (batchedWrite). */
const codeColumns = (codes: readonly CodeForSession[]) =>
  columnsOf(codes, {
    codeHashes: (c) => c.codeHash,
    sessionTokenHashes: (c) => c.sessionTokenHash,
    clientIds: (c) => c.clientId,
    redirectUris: (c) => c.redirectUri,
    /** Each code's scopes joined with spaces (a scope token has none). */
    scopes: (c) => c.scopes.join(' '),
    codeChallenges: (c) => c.codeChallenge,
    createdAts: (c) => c.createdAt,
    expiresAts: (c) => c.expiresAt,
    dpopJkts: (c) => c.dpopJkt ?? null,
  })

/**
 * The whole of a returning user's authorization in one statement, for a list of codes (one, or the
 * concurrent requests batchedWrite gathers; each row `i` meets every line below as a statement of its
 * own would): inserts the code only when the browser's session (by its token's hash) is live, the
 * client is enabled, redirect_uri is exactly one of its registered URIs, the client is registered for
 * every requested scope, and the session user's live grant to the client covers them all. No row lock,
 * so concurrent authorizations of one user do not queue; a revocation committing just after is still
 * safe, as redemption refuses a code of a revoked grant.
 */
const codesForSessions = prepareStatement(
  (_db, c: ReturnType<typeof codeColumns>) =>
    sql<{ code_hash: string; grant_id: string }>`
    insert into authorization_codes (code_hash, client_id, user_id, grant_id, redirect_uri, scopes, code_challenge,
                                     created_at, expires_at, dpop_jkt)
    select i.code_hash, g.client_id, g.user_id, g.id, i.redirect_uri, i.scopes, i.code_challenge, i.created_at,
           i.expires_at, i.dpop_jkt
      from (select code_hash, session_token_hash, client_id, redirect_uri, string_to_array(scopes, ' ') as scopes,
                   code_challenge, created_at, expires_at, dpop_jkt
              from unnest(${c.codeHashes}::text[], ${c.sessionTokenHashes}::text[], ${c.clientIds}::text[],
                          ${c.redirectUris}::text[], ${c.scopes}::text[], ${c.codeChallenges}::text[],
                          ${c.createdAts}::timestamptz[], ${c.expiresAts}::timestamptz[], ${c.dpopJkts}::text[])
                   as input(code_hash, session_token_hash, client_id, redirect_uri, scopes, code_challenge,
                            created_at, expires_at, dpop_jkt)) as i
      join sign_in_sessions as s on s.token_hash = i.session_token_hash
      join grants as g on g.user_id = s.user_id
      join clients as c on c.id = g.client_id
     where s.expires_at > i.created_at
       and g.client_id = i.client_id
       and g.revoked_at is null
       and g.scopes @> i.scopes
       and c.disabled_at is null
       -- A client that must push its requests (RFC 9126 §6) is refused by the long way.
       and not c.require_par
       -- A metadata document's stale copy is read again by the long way first.
       and (c.document_expires_at is null or c.document_expires_at > i.created_at)
       and i.redirect_uri = any(c.redirect_uris)
       and c.scopes @> i.scopes
    returning code_hash, grant_id
  `,
)

/**
 * Inserts returning users' codes as above, a list of them in ONE statement (batchedWrite shares it
 * among concurrent requests): each one's grant id, in order, or undefined (and nothing written for
 * it) when any line does not hold: the caller then finds out which the long way, and answers
 * accordingly.
 */
export async function insertAuthorizationCodesForSessions(
  db: Kysely<Database>,
  codes: readonly CodeForSession[],
): Promise<(string | undefined)[]> {
  const rows = await codesForSessions.execute(db, codeColumns(codes))
  const grantOf = new Map(rows.map((r) => [r.code_hash, r.grant_id]))
  return codes.map((c) => grantOf.get(c.codeHash))
}
