import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Client and resource-server lifecycle (issue 18). Expand only: every new column is nullable, so a
 * server of the previous version keeps working while this applies and never reads them.
 *
 * - clients: display metadata users see on the consent and connected-apps pages: homepage, privacy
 *   policy and terms URLs (https, checked by the service) and a short plain-text description.
 * - resource_servers: the secret that a rotation replaced, still accepted until
 *   previous_secret_expires_at (the overlap), so an API can roll its secret without downtime. Only
 *   its SHA-256 is stored, as for the current secret.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('homepage_url', 'text', (c) => c.check(sql`length(homepage_url) between 1 and 2048`))
    .addColumn('privacy_policy_url', 'text', (c) =>
      c.check(sql`length(privacy_policy_url) between 1 and 2048`),
    )
    .addColumn('terms_url', 'text', (c) => c.check(sql`length(terms_url) between 1 and 2048`))
    .addColumn('description', 'text', (c) => c.check(sql`length(description) between 1 and 300`))
    .execute()
  await db.schema
    .alterTable('resource_servers')
    .addColumn('previous_secret_hash', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('resource_servers')
    .dropColumn('previous_secret_expires_at')
    .dropColumn('previous_secret_hash')
    .execute()
  await db.schema
    .alterTable('clients')
    .dropColumn('description')
    .dropColumn('terms_url')
    .dropColumn('privacy_policy_url')
    .dropColumn('homepage_url')
    .execute()
}
