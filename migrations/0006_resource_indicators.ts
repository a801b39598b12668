import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Resource indicators (RFC 8707) and per-API audiences (issue 15). Expand only: every new column has
 * a default, so a server of the previous version keeps working while this applies, and rows written
 * before it mean what they meant (no resource named: the default audience, every granted scope).
 *
 * - resource_servers.resource: the API's resource identifier (an absolute URI, no fragment), unique
 *   among resource servers; null for a resource server registered before, which keeps accepting
 *   tokens of the default audience. resource_servers.scopes: the scopes that API serves.
 * - pending_authorizations, authorization_codes, refresh_families: the resources the authorization
 *   request named (RFC 8707 §2.1), carried from the request to the code and from the code to the
 *   refresh family, so the token endpoint can default to and check against them (§2.2).
 * - grants.resources: the resources the user consented to, as grants.scopes holds the scopes, so
 *   remembered consent covers a new request only when both are covered.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('resource_servers')
    .addColumn('resource', 'text', (c) => c.check(sql`length(resource) between 1 and 2048`))
    .addColumn('scopes', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
    .execute()
  await sql`create unique index if not exists resource_servers_resource_key on resource_servers (resource) where resource is not null`.execute(
    db,
  )
  for (const table of ['pending_authorizations', 'grants', 'authorization_codes', 'refresh_families']) {
    await db.schema
      .alterTable(table)
      .addColumn('resources', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'::text[]`))
      .execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['refresh_families', 'authorization_codes', 'grants', 'pending_authorizations']) {
    await db.schema.alterTable(table).dropColumn('resources').execute()
  }
  await sql`drop index if exists resource_servers_resource_key`.execute(db)
  await db.schema.alterTable('resource_servers').dropColumn('scopes').dropColumn('resource').execute()
}
