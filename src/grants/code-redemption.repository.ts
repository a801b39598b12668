import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/database.js'
import { columnsOf, prepareStatement } from '../db/prepared-statement.js'
import { isSubset } from '../lib/scopes.js'
import { constantTimeEqual } from '../lib/secrets.js'
import type { AuthorizationCode } from './authorization-code.repository.js'
import { type RefreshTokenIssue, resourceRefusal } from './refresh-token.repository.js'
import { servingResourcesOf } from './serving-resources.js'
import { standingOf } from '../clients/standing.js'
import type { ClientKind, StandingOverride } from '../db/database.js'

export interface CodeRedemptionRow {
  /** False when the client is unknown or disabled: then nothing was consumed or written. */
  clientActive: boolean
  /** The client requires DPoP and the request had no proof: nothing was consumed or written. */
  dpopRequired?: boolean
  /** The client's registered scopes (when it is active): a code for more is unauthorized_client. */
  clientScopes?: string[]
  /** What was issued, when the code passed every check and its grant is live. */
  issue?: RefreshTokenIssue
  /** The grant's last_used_at as this statement found it (set when something was issued). */
  grantLastUsedAt?: Date | null
  /** The code as it was when this statement consumed it; undefined when it was unknown or used. */
  consumed?: ConsumedCode
}

/** What decides whether a code may be redeemed. */
export type ConsumedCode = Pick<
  AuthorizationCode,
  'clientId' | 'redirectUri' | 'codeChallenge' | 'scopes' | 'expiresAt' | 'resources' | 'dpopJkt'
>

export interface CodeRedemptionValues {
  codeHash: string
  clientId: string
  redirectUri: string | null
  expectedChallenge: string
  /** The token request's `resource` (RFC 8707), null when none was named. */
  resource: string | null
  /** RFC 9449: the thumbprint of the request's DPoP key, null without a proof. */
  dpopJkt: string | null
  familyId: string
  tokenHash: string
  now: Date
  familyExpiresAt: Date
  tokenExpiresAt: Date
}

/** CodeRedemptionValues as columns: the redemption statement takes a list of redemptions (batchedWrite). */
const redemptionColumns = (list: readonly CodeRedemptionValues[]) =>
  columnsOf(list, {
    codeHashes: (r) => r.codeHash,
    clientIds: (r) => r.clientId,
    redirectUris: (r) => r.redirectUri,
    expectedChallenges: (r) => r.expectedChallenge,
    resources: (r) => r.resource,
    dpopJkts: (r) => r.dpopJkt,
    familyIds: (r) => r.familyId,
    tokenHashes: (r) => r.tokenHash,
    nows: (r) => r.now,
    familyExpiresAts: (r) => r.familyExpiresAt,
    tokenExpiresAts: (r) => r.tokenExpiresAt,
  })

/**
 * The whole code exchange in ONE statement (one round trip, atomic without an explicit transaction),
 * for a list of redemptions of distinct codes (one, or the concurrent requests batchedWrite gathers):
 * each input row `i` meets every line below exactly as a statement of its own would.
 * When the client is registered and enabled, consume the code if unconsumed; if it is this client's,
 * unexpired, for this redirect_uri (when sent), its challenge equals BASE64URL(SHA256(verifier)) and its
 * scopes are within the client's, and its grant is live, then record the new family on the code and
 * start the family and its first refresh token. A code that fails a check is still consumed (single
 * use), with nothing issued. An unknown or disabled client touches nothing (invalid_client, and the
 * code stays usable by its own client). The statement always answers one row per input, so the caller
 * tells an unknown client, an unknown or used code, a refused code and a redemption apart without
 * asking again.
 *
 * The family is inserted only while its grant row, locked FOR SHARE, is still live. Without the lock a
 * revocation committing between this statement's snapshot and its insert would revoke the grant's
 * families before this one exists, leaving a live family under a revoked grant; with it, the revocation
 * waits for this statement, or this statement waits for the revocation and then sees the grant revoked.
 * In that case the code names a family that was not inserted, the foreign key fails the whole statement,
 * and nothing is written (the caller answers invalid_grant; in a batch, each input then runs alone).
 * The lock is shared, so exchanges of one grant do not queue behind each other; for the same reason the
 * grant's last_used_at is not written here (a shared lock upgraded by two statements at once is a
 * deadlock): the grant's last use is returned, and the caller touches the row separately when it is stale.
 * The challenge comparison is SQL equality: a code_challenge is public (it travels in the authorization
 * URL), so there is nothing for a timing difference to reveal.
 */
const redemptionStatement = prepareStatement(
  (_db, r: ReturnType<typeof redemptionColumns>) =>
    sql<{
      n: string
      client_scopes: string[] | null
      client_requires_dpop: boolean | null
      client_id: string | null
      redirect_uri: string | null
      code_challenge: string | null
      scopes: string[] | null
      expires_at: Date | null
      resources: string[] | null
      grant_id: string | null
      user_id: string | null
      issued_family_id: string | null
      grant_last_used_at: Date | null
      dpop_jkt: string | null
      serving_resources: string[] | null
      client_kind: ClientKind | null
      standing_override: StandingOverride | null
    }>`
    with i as (
      select * from unnest(${r.codeHashes}::text[], ${r.clientIds}::text[], ${r.redirectUris}::text[],
                           ${r.expectedChallenges}::text[], ${r.resources}::text[], ${r.dpopJkts}::text[],
                           ${r.familyIds}::uuid[], ${r.tokenHashes}::text[], ${r.nows}::timestamptz[],
                           ${r.familyExpiresAts}::timestamptz[], ${r.tokenExpiresAts}::timestamptz[])
               with ordinality as input(code_hash, client_id, redirect_uri, expected_challenge, resource, dpop_jkt,
                                        family_id, token_hash, now, family_expires_at, token_expires_at, n)
    ), client as (
      select i.n, c.scopes, c.require_dpop, c.kind, c.standing_override
        from i join clients as c on c.id = i.client_id and c.disabled_at is null
    ), consumed as (
      update authorization_codes as c
         set consumed_at = i.now,
             family_id = case
               -- codeRefusal's lines, in its order:
               when c.client_id = i.client_id
                and c.expires_at > i.now
                and (i.redirect_uri is null or c.redirect_uri = i.redirect_uri)
                and c.code_challenge = i.expected_challenge
                and c.scopes <@ client.scopes
                and (i.resource = any(c.resources)
                     or i.resource is null and cardinality(c.resources) <= 1)
                and (c.dpop_jkt is null or c.dpop_jkt = i.dpop_jkt)
                and exists (select 1 from grants g where g.id = c.grant_id and g.revoked_at is null)
               then i.family_id
             end
        from i join client on client.n = i.n
       where c.code_hash = i.code_hash and c.consumed_at is null
         and (i.dpop_jkt is not null or not client.require_dpop)
      returning i.n, c.client_id, c.user_id, c.grant_id, c.redirect_uri, c.code_challenge, c.scopes, c.expires_at,
                c.family_id, c.resources, c.dpop_jkt
    ), family as (
      insert into refresh_families (id, grant_id, client_id, user_id, scopes, resources, created_at, expires_at,
                                    dpop_jkt)
      select consumed.family_id, consumed.grant_id, consumed.client_id, consumed.user_id, consumed.scopes,
             consumed.resources, i.now, i.family_expires_at, i.dpop_jkt
        from consumed join i on i.n = consumed.n join grants as g on g.id = consumed.grant_id
       where consumed.family_id is not null and g.revoked_at is null
         for share of g
      returning id
    ), first_token as (
      insert into refresh_tokens (token_hash, family_id, scopes, created_at, expires_at)
      select i.token_hash, family.id, consumed.scopes, i.now, least(i.token_expires_at, i.family_expires_at)
        from family join consumed on consumed.family_id = family.id join i on i.n = consumed.n
      returning family_id
    )
    select i.n, client.scopes as client_scopes, client.require_dpop as client_requires_dpop,
           client.kind as client_kind, client.standing_override,
           consumed.dpop_jkt, consumed.client_id, consumed.redirect_uri, consumed.code_challenge, consumed.scopes,
           consumed.expires_at, consumed.resources, consumed.grant_id, consumed.user_id,
           first_token.family_id as issued_family_id,
           (select g.last_used_at from grants g where g.id = consumed.grant_id) as grant_last_used_at,
           case when i.resource is null and cardinality(consumed.resources) = 0
                then ${servingResourcesOf(sql`consumed.scopes`)}
           end as serving_resources
      from i left join client on client.n = i.n
             left join consumed on consumed.n = i.n
             left join first_token on first_token.family_id = consumed.family_id
  `,
)

/** Why a code found unconsumed issues nothing. */
export type CodeRefusal =
  | 'other_client'
  | 'expired'
  | 'redirect_uri_mismatch'
  | 'verifier_mismatch'
  | 'scope_not_allowed'
  | 'resource_not_authorized'
  | 'resource_ambiguous'
  | 'grant_revoked'
  | 'dpop_key_mismatch'

/**
 * The redemption statement's `case when` in TypeScript, line for line and in the same order: the one
 * home of the rule that the slow path uses to say why a code was refused. `grantLive` is the last
 * line's fact, which the statement's answer does not carry: after a refusal whose other lines all
 * hold, it was the one that failed.
 */
export function codeRefusal(
  code: ConsumedCode,
  attempt: Pick<
    CodeRedemptionValues,
    'clientId' | 'redirectUri' | 'expectedChallenge' | 'now' | 'resource' | 'dpopJkt'
  >,
  clientScopes: readonly string[],
  grantLive: boolean,
): CodeRefusal | undefined {
  if (code.clientId !== attempt.clientId) return 'other_client' // c.client_id = $clientId
  if (code.expiresAt.getTime() <= attempt.now.getTime()) return 'expired' // c.expires_at > $now
  if (attempt.redirectUri !== null && attempt.redirectUri !== code.redirectUri) return 'redirect_uri_mismatch' // $redirectUri is null or c.redirect_uri = $redirectUri
  if (!constantTimeEqual(attempt.expectedChallenge, code.codeChallenge)) return 'verifier_mismatch' // c.code_challenge = $expectedChallenge
  if (!isSubset(code.scopes, clientScopes)) return 'scope_not_allowed' // c.scopes <@ client.scopes
  const resourceLine = resourceRefusal(attempt.resource, code.resources) // $resource = any(c.resources) or …
  if (resourceLine) return resourceLine
  if (code.dpopJkt !== null && code.dpopJkt !== attempt.dpopJkt) return 'dpop_key_mismatch' // c.dpop_jkt is null or c.dpop_jkt = $dpopJkt
  if (!grantLive) return 'grant_revoked' // exists (a live grant g.id = c.grant_id)
  return undefined
}

/** The redemption statement for a list of redemptions of distinct codes in ONE statement, in order. */
export async function redeemAuthorizationCodeRows(
  db: Kysely<Database>,
  redemptions: readonly CodeRedemptionValues[],
): Promise<CodeRedemptionRow[]> {
  const rows = await redemptionStatement.execute(db, redemptionColumns(redemptions))
  const answers: CodeRedemptionRow[] = redemptions.map(() => ({ clientActive: false }))
  for (const row of rows) {
    const index = Number(row.n) - 1
    answers[index] = redemptionRow(row, redemptions[index]!)
  }
  return answers
}

function redemptionRow(
  row: Awaited<ReturnType<typeof redemptionStatement.execute>>[number],
  redemption: CodeRedemptionValues,
): CodeRedemptionRow {
  if (!row?.client_scopes) return { clientActive: false }
  const clientScopes = row.client_scopes
  if (row.client_requires_dpop && redemption.dpopJkt === null)
    return { clientActive: true, clientScopes, dpopRequired: true }
  if (!row.client_id) return { clientActive: true, clientScopes }
  const consumed = {
    clientId: row.client_id,
    redirectUri: row.redirect_uri!,
    codeChallenge: row.code_challenge!,
    scopes: row.scopes!,
    expiresAt: row.expires_at!,
    resources: row.resources!,
    dpopJkt: row.dpop_jkt,
  }
  if (!row.issued_family_id) return { clientActive: true, clientScopes, consumed }
  return {
    clientActive: true,
    clientScopes,
    consumed,
    grantLastUsedAt: row.grant_last_used_at,
    issue: {
      familyId: row.issued_family_id,
      grantId: row.grant_id!,
      userId: row.user_id!,
      clientId: row.client_id,
      scopes: consumed.scopes,
      resources: consumed.resources,
      servingResources: row.serving_resources ?? undefined,
      clientStanding: standingOf({ kind: row.client_kind!, standingOverride: row.standing_override }),
    },
  }
}
