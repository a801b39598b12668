import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The links API's own tables, in its own schema: it is a separate service that may share a
 * PostgreSQL server (or database) with the authorization server but never its tables.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const schema = db.schema.withSchema('links_api')
  await schema
    .createTable('links')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // Newest first, in a stable order: the keyset of list pages (cursor = seq).
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    // The access token's `sub`: the user of the authorization server, not a row of ours.
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull())
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  // Slugs are unique whatever their case: /Promo and /promo are one link.
  await sql`create unique index links_slug_key on links_api.links (lower(slug))`.execute(db)
  await sql`create index links_owner_seq_idx on links_api.links (owner_id, seq desc)`.execute(db)
  await sql`create index links_tags_idx on links_api.links using gin (tags)`.execute(db)

  await schema
    .createTable('link_daily_clicks')
    .addColumn('link_id', 'uuid', (c) => c.notNull().references('links_api.links.id').onDelete('cascade'))
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('clicks', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_daily_clicks_pkey', ['link_id', 'day'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.withSchema('links_api').dropTable('link_daily_clicks').execute()
  await db.schema.withSchema('links_api').dropTable('links').execute()
}
