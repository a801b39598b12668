import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * An application's standing as the operator decided it (issue 37). Expand only: nullable columns,
 * so a server of the previous version keeps working while this applies.
 *
 * - clients.standing_override: null (the default) means the standing follows from the kind
 *   (registered → verified, metadata_document → vouched for by its host, dynamic → unverified);
 *   'verified' is the operator vouching for an app that came in by itself, 'unverified' the
 *   operator taking a standing away.
 * - clients.standing_set_at: when the operator last set or cleared it (null: never).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('standing_override', 'text', (c) =>
      c.check(sql`standing_override in ('verified', 'unverified')`),
    )
    .addColumn('standing_set_at', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .dropColumn('standing_set_at')
    .dropColumn('standing_override')
    .execute()
}
