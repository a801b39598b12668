import type { Kysely } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The leash counts imports too (issue 37): an import job records the application that started it
 * and the hour its rows were counted in (app_write_counts), so that the background runner gives
 * back the rows that made no link (duplicates, conflicts). Jobs started before this migration have
 * neither (null): nothing was counted for them, and nothing is given back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('links_api')
    .alterTable('import_jobs')
    .addColumn('client_id', 'text')
    .addColumn('leash_window', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('links_api')
    .alterTable('import_jobs')
    .dropColumn('leash_window')
    .dropColumn('client_id')
    .execute()
}
