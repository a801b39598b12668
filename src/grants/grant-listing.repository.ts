import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

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
}

/**
 * The user's live grants to enabled clients, oldest first. The client's name is joined in here
 * (clients.id is the primary key) so that the page is one round trip.
 */
export async function listLiveGrantsOfUser(
  db: Kysely<Database>,
  userId: string,
): Promise<LiveGrantSummary[]> {
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
  }))
}
