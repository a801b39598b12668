import type { Kysely } from 'kysely'
import type { Database, Row } from '../db/database.js'
import { isLocale, type Locale } from '../web/i18n/locales.js'

/** A validated authorization request, kept server-side while the user signs in and consents. */
export interface PendingAuthorization {
  id: string
  clientId: string
  redirectUri: string
  scopes: string[]
  state: string | null
  codeChallenge: string
  prompt: string | null
  /** RFC 8707 resource indicators of the request; empty when none was named. */
  resources: string[]
  /** RFC 9449 §10: the request's dpop_jkt; null when not sent. */
  dpopJkt: string | null
  /** The language the request asked its pages in (ui_locales); null: none we speak, or none asked. */
  uiLocale: Locale | null
  createdAt: Date
  expiresAt: Date
  completedAt: Date | null
  sessionId: string | null
}

function toPendingAuthorization(row: Row<'pending_authorizations'>): PendingAuthorization {
  return {
    id: row.id,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    scopes: row.scopes,
    state: row.state,
    codeChallenge: row.code_challenge,
    prompt: row.prompt,
    resources: row.resources,
    dpopJkt: row.dpop_jkt,
    uiLocale: isLocale(row.ui_locale) ? row.ui_locale : null,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    completedAt: row.completed_at,
    sessionId: row.session_id,
  }
}

export async function insertPendingAuthorization(
  db: Kysely<Database>,
  pending: Omit<PendingAuthorization, 'completedAt' | 'sessionId' | 'resources' | 'dpopJkt' | 'uiLocale'> & {
    resources?: string[]
    dpopJkt?: string | null
    uiLocale?: Locale | null
  },
): Promise<PendingAuthorization> {
  const row = await db
    .insertInto('pending_authorizations')
    .values({
      id: pending.id,
      client_id: pending.clientId,
      redirect_uri: pending.redirectUri,
      scopes: pending.scopes,
      state: pending.state,
      code_challenge: pending.codeChallenge,
      prompt: pending.prompt,
      resources: pending.resources ?? [],
      dpop_jkt: pending.dpopJkt ?? null,
      ui_locale: pending.uiLocale ?? null,
      created_at: pending.createdAt,
      expires_at: pending.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toPendingAuthorization(row)
}

/** A request that is neither answered nor expired at `now`. */
export async function findOpenPendingAuthorization(
  db: Kysely<Database>,
  id: string,
  now: Date,
): Promise<PendingAuthorization | undefined> {
  const row = await db
    .selectFrom('pending_authorizations')
    .selectAll()
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return row && toPendingAuthorization(row)
}

/** Records the session that just signed in for this request (prompt=login looks for it). */
export async function setPendingAuthorizationSession(
  db: Kysely<Database>,
  id: string,
  sessionId: string,
): Promise<void> {
  await db
    .updateTable('pending_authorizations')
    .set({ session_id: sessionId })
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .execute()
}

/**
 * Answers a request once: one conditional UPDATE, so of two submits of the same consent form only
 * one gets the row back. An expired request cannot be completed either.
 */
export async function completePendingAuthorization(
  db: Kysely<Database>,
  id: string,
  now: Date,
): Promise<PendingAuthorization | undefined> {
  const row = await db
    .updateTable('pending_authorizations')
    .set({ completed_at: now })
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
  return row && toPendingAuthorization(row)
}
