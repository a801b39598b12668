import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The language an authorization request asked its pages in (OIDC ui_locales, issue 40): the first of
 * its tags the pages speak, kept with the pending request so that sign-in and consent speak it.
 * Expand only: nullable, so a server of the previous version keeps working while this applies.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('pending_authorizations')
    .addColumn('ui_locale', 'text', (c) => c.check(sql`ui_locale is null or length(ui_locale) <= 16`))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('pending_authorizations').dropColumn('ui_locale').execute()
}
