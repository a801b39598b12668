import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

/** A live sign-in session with the email of its user (for "signed in as …"). */
export interface SignInSession {
  id: string
  userId: string
  email: string
  csrfSecret: string
  createdAt: Date
  expiresAt: Date
  /** The last fresh password or passkey check in this session, if any (migration 0015). */
  reauthenticatedAt?: Date | null
}

export async function insertSession(
  db: Kysely<Database>,
  session: { tokenHash: string; userId: string; csrfSecret: string; createdAt: Date; expiresAt: Date },
): Promise<string> {
  const row = await db
    .insertInto('sign_in_sessions')
    .values({
      token_hash: session.tokenHash,
      user_id: session.userId,
      csrf_secret: session.csrfSecret,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/** The session whose token hashes to `tokenHash`, if it has not expired at `now`. */
export async function findLiveSessionByTokenHash(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<SignInSession | undefined> {
  const row = await db
    .selectFrom('sign_in_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      'u.email',
      's.csrf_secret',
      's.created_at',
      's.expires_at',
      's.reauthenticated_at',
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.expires_at', '>', now)
    .executeTakeFirst()
  return (
    row && {
      id: row.id,
      userId: row.user_id,
      email: row.email,
      csrfSecret: row.csrf_secret,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      reauthenticatedAt: row.reauthenticated_at,
    }
  )
}

/** Notes a fresh password or passkey check in this session. */
export async function markSessionReauthenticated(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db.updateTable('sign_in_sessions').set({ reauthenticated_at: at }).where('id', '=', id).execute()
}

export async function deleteSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('sign_in_sessions').where('id', '=', id).execute()
}

/** Ends every sign-in session of a user (a reset link was used); how many ended. */
export async function deleteSessionsOfUser(db: Kysely<Database>, userId: string): Promise<number> {
  const ended = await db.deleteFrom('sign_in_sessions').where('user_id', '=', userId).executeTakeFirst()
  return Number(ended.numDeletedRows)
}
