import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The sign-in session that signed in for a pending authorization request. prompt=login (OIDC
 * §3.1.2.1) must see a fresh sign-in for this very request, not merely some live session.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('pending_authorizations')
    .addColumn('session_id', 'uuid', (c) => c.references('sign_in_sessions.id').onDelete('set null'))
    .execute()
  await sql`create index pending_authorizations_session_id_idx on pending_authorizations (session_id)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('pending_authorizations').dropColumn('session_id').execute()
}
