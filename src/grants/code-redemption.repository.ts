import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import type { AuthorizationCode } from './authorization-code.repository.js'
import type { RefreshTokenIssue } from './refresh-token.repository.js'

export interface CodeRedemptionRow {
  /** What was issued, when the code passed every check and its grant is live. */
  issue?: RefreshTokenIssue
  /** The code as it was when this statement consumed it; undefined when it was unknown or used. */
  consumed?: Pick<AuthorizationCode, 'clientId' | 'redirectUri' | 'codeChallenge' | 'scopes' | 'expiresAt'>
}

/**
 * The whole code exchange in ONE statement (one round trip, atomic without an explicit transaction):
 * consume the code if unconsumed; if it is this client's, unexpired, for this redirect_uri (when sent),
 * its challenge equals BASE64URL(SHA256(verifier)) and its scopes are within the client's, and its grant
 * is live, then record the new family on the code, start the family and its first refresh token, and
 * mark the grant used (at most once a minute: every exchange updating one row would queue them all on
 * its lock). A revocation committing meanwhile is safe: every later check also asks the grant. A code that fails a check is still consumed (single use), with nothing issued.
 * The challenge comparison is SQL equality: a code_challenge is public (it travels in the authorization
 * URL), so there is nothing for a timing difference to reveal.
 */
export async function redeemAuthorizationCodeRow(
  db: Kysely<Database>,
  redemption: {
    codeHash: string
    clientId: string
    redirectUri: string | null
    expectedChallenge: string
    clientScopes: readonly string[]
    familyId: string
    tokenHash: string
    now: Date
    familyExpiresAt: Date
    tokenExpiresAt: Date
    /** grants.last_used_at is refreshed only when older than this (see refresh rotation). */
    touchGrantBefore: Date
  },
): Promise<CodeRedemptionRow> {
  const r = redemption
  const { rows } = await sql<{
    client_id: string
    redirect_uri: string
    code_challenge: string
    scopes: string[]
    expires_at: Date
    grant_id: string
    user_id: string
    issued_family_id: string | null
  }>`
    with consumed as (
      update authorization_codes as c
         set consumed_at = ${r.now},
             family_id = case
               when c.client_id = ${r.clientId}
                and c.expires_at > ${r.now}
                and (${r.redirectUri}::text is null or c.redirect_uri = ${r.redirectUri}::text)
                and c.code_challenge = ${r.expectedChallenge}
                and c.scopes <@ ${r.clientScopes}::text[]
                and exists (select 1 from grants g where g.id = c.grant_id and g.revoked_at is null)
               then ${r.familyId}::uuid
             end
       where c.code_hash = ${r.codeHash} and c.consumed_at is null
      returning c.client_id, c.user_id, c.grant_id, c.redirect_uri, c.code_challenge, c.scopes, c.expires_at,
                c.family_id
    ), touched as (
      update grants as g set last_used_at = ${r.now}
        from consumed
       where g.id = consumed.grant_id and consumed.family_id is not null
         and (g.last_used_at is null or g.last_used_at < ${r.touchGrantBefore})
    ), family as (
      insert into refresh_families (id, grant_id, client_id, user_id, scopes, created_at, expires_at)
      select consumed.family_id, consumed.grant_id, consumed.client_id, consumed.user_id, consumed.scopes,
             ${r.now}, ${r.familyExpiresAt}
        from consumed
       where consumed.family_id is not null
      returning id
    ), first_token as (
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select ${r.tokenHash}, family.id, consumed.scopes, ${r.now},
             least(${r.tokenExpiresAt}::timestamptz, ${r.familyExpiresAt}::timestamptz)
        from family, consumed
      returning family_id
    )
    select consumed.client_id, consumed.redirect_uri, consumed.code_challenge, consumed.scopes, consumed.expires_at,
           consumed.grant_id, consumed.user_id, (select family_id from first_token) as issued_family_id
      from consumed
  `.execute(db)
  const row = rows[0]
  if (!row) return {}
  const consumed = {
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    scopes: row.scopes,
    expiresAt: row.expires_at,
  }
  if (!row.issued_family_id) return { consumed }
  return {
    consumed,
    issue: {
      familyId: row.issued_family_id,
      grantId: row.grant_id,
      userId: row.user_id,
      clientId: row.client_id,
      scopes: row.scopes,
    },
  }
}
