import type { Kysely } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Archiving e-commerce links (expand-only: one nullable column). An archived link's short URL stops
 * redirecting and counting clicks, its slug stays taken (a printed URL never leads somewhere new),
 * and its clicks, conversions and statistics stay: a marketer ends a campaign without losing it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .withSchema('commerce_api')
    .alterTable('links')
    .addColumn('archived_at', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('commerce_api').alterTable('links').dropColumn('archived_at').execute()
}
