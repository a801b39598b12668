import type { Kysely } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The leash on apps nobody vetted (issue 37): how many writes each application made for each person
 * in the current hour (examples/shared/app-leash.ts). One row per (person, application): a new hour
 * starts its count again, so the table holds no history to clean.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('commerce_api')
    .createTable('app_write_counts')
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('app_write_counts_pkey', ['owner_id', 'client_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('commerce_api').dropTable('app_write_counts').execute()
}
