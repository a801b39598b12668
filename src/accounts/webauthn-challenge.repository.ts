import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

export type ChallengePurpose = 'sign_in' | 'register' | 'reauthenticate' | 'reset'

export async function insertChallenge(
  db: Kysely<Database>,
  row: {
    challengeHash: string
    purpose: ChallengePurpose
    bindingHash: string
    userId: string | null
    createdAt: Date
    expiresAt: Date
  },
): Promise<void> {
  await db
    .insertInto('webauthn_challenges')
    .values({
      challenge_hash: row.challengeHash,
      purpose: row.purpose,
      binding_hash: row.bindingHash,
      user_id: row.userId,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute()
}

/**
 * Spends a challenge: one DELETE … RETURNING, so of any number of concurrent uses on any number of
 * instances exactly one gets the row. Only a live challenge issued for this purpose to this browser
 * counts; the row is deleted whatever the answer. Answers the user it was issued for (null: any).
 */
export async function spendChallenge(
  db: Kysely<Database>,
  challenge: { challengeHash: string; purpose: ChallengePurpose; bindingHash: string; now: Date },
): Promise<{ userId: string | null } | undefined> {
  const row = await db
    .deleteFrom('webauthn_challenges')
    .where('challenge_hash', '=', challenge.challengeHash)
    .returning(['purpose', 'binding_hash', 'user_id', 'expires_at'])
    .executeTakeFirst()
  if (!row) return undefined
  const fits =
    row.purpose === challenge.purpose &&
    row.binding_hash === challenge.bindingHash &&
    row.expires_at > challenge.now
  return fits ? { userId: row.user_id } : undefined
}
