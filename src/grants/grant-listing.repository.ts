import { type Kysely, sql } from 'kysely'
import type { ClientKind, Database, StandingOverride } from '../db/database.js'

/** A live grant as its user sees it: which application, for what, since when, last used when. */
export interface LiveGrantSummary {
  grantId: string
  clientId: string
  clientName: string
  /** The client's display metadata (description and links), as registered. */
  clientMetadata: {
    homepageUrl: string | null
    privacyPolicyUrl: string | null
    termsUrl: string | null
    description: string | null
  }
  scopes: string[]
  /** RFC 8707 resources the user consented to. */
  resources: string[]
  createdAt: Date
  lastUsedAt: Date | null
  /** What the standing and the host are made of (clients/standing.ts). */
  client: { kind: ClientKind; standingOverride: StandingOverride | null; redirectUris: string[] }
  /**
   * The app holds a live token now: a refresh token of a family not revoked, unspent and unexpired,
   * or an access token still inside its lifetime (issued with a token of such a family). False: it
   * signed out (revoked its tokens, RFC 7009) or let them lapse; the grant (the consent) stays.
   */
  connected: boolean
  /** Allowed at least once for a device request (RFC 8628): the app runs on another device. */
  onAnotherDevice: boolean
}

/**
 * The user's live grants to enabled clients, oldest first. The client's name is joined in here
 * (clients.id is the primary key) so that the page is one round trip.
 */
export async function listLiveGrantsOfUser(
  db: Kysely<Database>,
  userId: string,
  now: Date,
  accessTokenTtlSeconds: number,
): Promise<LiveGrantSummary[]> {
  const accessIssuedAfter = new Date(now.getTime() - accessTokenTtlSeconds * 1000)
  const rows = await db
    .selectFrom('grants as g')
    .innerJoin('clients as c', 'c.id', 'g.client_id')
    .select([
      'g.id',
      'g.client_id',
      'c.name',
      'c.homepage_url',
      'c.privacy_policy_url',
      'c.terms_url',
      'c.description',
      'g.scopes',
      'g.resources',
      'g.created_at',
      'g.last_used_at',
      'c.kind',
      'c.standing_override',
      'c.redirect_uris',
      sql<boolean>`exists (
        select 1 from refresh_families f join refresh_tokens t on t.family_id = f.id
        where f.grant_id = g.id and f.revoked_at is null
          and ((t.rotated_at is null and t.expires_at > ${now} and f.expires_at > ${now})
            or t.created_at > ${accessIssuedAfter}))`.as('connected'),
      'g.device_authorized_at',
    ])
    .where('g.user_id', '=', userId)
    .where('g.revoked_at', 'is', null)
    .where('c.disabled_at', 'is', null)
    .orderBy('g.created_at')
    .orderBy('g.id')
    .execute()
  return rows.map((r) => ({
    grantId: r.id,
    clientId: r.client_id,
    clientName: r.name,
    clientMetadata: {
      homepageUrl: r.homepage_url,
      privacyPolicyUrl: r.privacy_policy_url,
      termsUrl: r.terms_url,
      description: r.description,
    },
    scopes: r.scopes,
    resources: r.resources,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    client: { kind: r.kind, standingOverride: r.standing_override, redirectUris: r.redirect_uris },
    connected: r.connected,
    onAnotherDevice: r.device_authorized_at !== null,
  }))
}
