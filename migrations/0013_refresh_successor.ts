import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * One lineage per refresh family (issue 31): inside the retry window (REFRESH_REUSE_WINDOW) a spent
 * refresh token is answered with the SAME successor its rotation issued, never a new branch, so
 * honest retries converge and a thief's copy collides with the client's at the next rotation.
 *
 * - refresh_tokens.successor_encrypted: the successor's plaintext, AES-256-GCM under the
 *   key-encryption key (the one that encrypts signing keys), bound to this row's token_hash. Written
 *   by the rotation, read only inside the window, and wiped by housekeeping once the window is over.
 * - refresh_tokens_successor_held: the partial index housekeeping wipes through (few rows: a window's).
 * - A ciphertext only on a spent token (check).
 *
 * Branches that 0007's rule started stay as they are (each still rotates on its own, and a reuse of
 * any spent token after its window revokes the family); no new one is made.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('refresh_tokens').addColumn('successor_encrypted', 'text').execute()
  await sql`alter table refresh_tokens add constraint refresh_tokens_successor_only_when_spent
    check (successor_encrypted is null or rotated_at is not null)`.execute(db)
  await sql`create index refresh_tokens_successor_held on refresh_tokens (rotated_at)
    where successor_encrypted is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists refresh_tokens_successor_held`.execute(db)
  await db.schema.alterTable('refresh_tokens').dropColumn('successor_encrypted').execute()
}
