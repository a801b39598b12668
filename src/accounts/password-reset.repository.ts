import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export async function insertPasswordResetToken(
  db: Kysely<Database>,
  row: { tokenHash: string; userId: string; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('password_reset_tokens')
    .values({
      token_hash: row.tokenHash,
      user_id: row.userId,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute()
}

/**
 * Whether a link is usable now (the page's GET): unused and unexpired; its user, and whether their
 * password signs in (false: a passwordless account).
 */
export async function findUsableResetToken(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<{ userId: string; email: string; passwordSignIn: boolean } | undefined> {
  const row = await db
    .selectFrom('password_reset_tokens')
    .innerJoin('users', 'users.id', 'password_reset_tokens.user_id')
    .select(['password_reset_tokens.user_id', 'users.email', 'users.password_sign_in'])
    .where('password_reset_tokens.token_hash', '=', tokenHash)
    .where('password_reset_tokens.used_at', 'is', null)
    .where('password_reset_tokens.expires_at', '>', now)
    .executeTakeFirst()
  return row && { userId: row.user_id, email: row.email, passwordSignIn: row.password_sign_in }
}

/**
 * Uses a link: one conditional UPDATE, so of two concurrent uses exactly one gets the user back
 * (the other waits for the row lock, then finds used_at set). Call inside the transaction that
 * sets the password, so a failure leaves the link unused.
 */
export async function consumeResetToken(
  db: Kysely<Database>,
  tokenHash: string,
  now: Date,
): Promise<{ userId: string } | undefined> {
  const row = await db
    .updateTable('password_reset_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst()
  return row && { userId: row.user_id }
}

/** Ends every other unused link of the user (their password has just changed). */
export async function voidResetTokensOf(db: Kysely<Database>, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('password_reset_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute()
}
