import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The refresh retry window (issue 17, REFRESH_REUSE_WINDOW). A spent refresh token presented again
 * by its client shortly after it rotated (a lost response, two tabs, an app woken twice) is answered
 * with fresh tokens instead of revoking the family. Each such answer starts a branch of the family:
 * a new unrotated token beside the successor of the first rotation.
 *
 * - refresh_tokens.window_answers: how many answers the token gave inside the window after it
 *   rotated. The rotation statement counts it up under the token's row lock, which is what bounds
 *   the branches one spent token can start (REFRESH_RETRY_ANSWERS) across instances.
 * - refresh_tokens_one_live_per_family is dropped: with branches a family holds one unrotated token
 *   per branch (1 + the sum of its tokens' window_answers). No statement names or reads the index; it
 *   was a backstop for the rotation's conditional UPDATE, which still lets exactly one request
 *   rotate a token. The previous version runs unchanged without it (its rotations and reuse checks
 *   never relied on it), so this stays safe to apply under a running server.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('refresh_tokens')
    .addColumn('window_answers', 'smallint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`drop index if exists refresh_tokens_one_live_per_family`.execute(db)
}

/**
 * Back to one unrotated token per family: of several branches only the newest head stays usable; the
 * others are marked rotated (presenting one again then revokes the family, the previous rule).
 */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    update refresh_tokens as t set rotated_at = t.created_at
     where t.rotated_at is null
       and exists (select 1 from refresh_tokens n
                    where n.family_id = t.family_id and n.rotated_at is null
                      and (n.created_at, n.token_hash) > (t.created_at, t.token_hash))`.execute(db)
  await sql`create unique index refresh_tokens_one_live_per_family on refresh_tokens (family_id) where rotated_at is null`.execute(
    db,
  )
  await db.schema.alterTable('refresh_tokens').dropColumn('window_answers').execute()
}
