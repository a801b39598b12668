import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * The commerce API's own tables, in its own schema `commerce_api`: a separate service that may
 * share a PostgreSQL server (or database) with the authorization server and the links API, but
 * never their tables. Owners are access tokens' `sub`s, not rows of ours. Money is bigint minor units.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const schema = db.schema.withSchema('commerce_api')

  await schema
    .createTable('sync_runs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open'))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .addColumn('marked_unavailable', 'integer')
    .execute()

  await schema
    .createTable('products')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    // The shop's own id: the key of every upsert.
    .addColumn('shop_product_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('price_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('availability', 'text', (c) => c.notNull())
    .addColumn('image_url', 'text')
    // The last sync run that named it: a full sync marks the others unavailable when it completes.
    .addColumn('last_sync_run_id', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`create unique index products_owner_shop_id_key on commerce_api.products (owner_id, shop_product_id)`.execute(
    db,
  )
  // The keyset of catalogue listings: (updated_at, id) within an owner.
  await sql`create index products_owner_updated_idx on commerce_api.products (owner_id, updated_at, id)`.execute(
    db,
  )

  await schema
    .createTable('links')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity())
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    // A catalogue product (its URL read at each click) or a fixed product URL: one of the two.
    .addColumn('product_id', 'uuid', (c) => c.references('commerce_api.products.id'))
    .addColumn('target_url', 'text')
    .addColumn('campaign', 'text')
    .addColumn('utm_source', 'text')
    .addColumn('utm_medium', 'text')
    .addColumn('utm_campaign', 'text')
    .addColumn('utm_term', 'text')
    .addColumn('utm_content', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('links_target_check', sql`(product_id is null) <> (target_url is null)`)
    .execute()
  await sql`create unique index links_slug_key on commerce_api.links (lower(slug))`.execute(db)
  await sql`create index links_owner_seq_idx on commerce_api.links (owner_id, seq desc)`.execute(db)
  await sql`create index links_owner_campaign_idx on commerce_api.links (owner_id, campaign)`.execute(db)

  await schema
    .createTable('clicks')
    // Random and unguessable (128 bits): what the shop reports back with a conversion.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('link_id', 'uuid', (c) => c.notNull().references('commerce_api.links.id'))
    .addColumn('clicked_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await sql`create index clicks_link_time_idx on commerce_api.clicks (link_id, clicked_at)`.execute(db)

  await schema
    .createTable('conversions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('click_id', 'text', (c) => c.notNull().references('commerce_api.clicks.id'))
    .addColumn('link_id', 'uuid', (c) => c.notNull().references('commerce_api.links.id'))
    .addColumn('value_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute()
  // Idempotency: one conversion per order of a user.
  await sql`create unique index conversions_owner_order_key on commerce_api.conversions (owner_id, order_id)`.execute(
    db,
  )
  await sql`create index conversions_link_time_idx on commerce_api.conversions (link_id, occurred_at)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  const schema = db.schema.withSchema('commerce_api')
  for (const table of ['conversions', 'clicks', 'links', 'products', 'sync_runs'])
    await schema.dropTable(table).execute()
}
