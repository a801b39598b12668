import { type Kysely, sql } from 'kysely'

// Frozen once landed: add a new numbered migration instead of editing this one.

/**
 * Importing links from another shortener (expand-only: new nullable/defaulted columns, new tables).
 * - links: the title and the click count the other service had counted, and the import key that
 *   makes re-importing the same row a no-op (unique per owner).
 * - import_jobs: one upload, its state, its counters, and where its processing stands (next_line),
 *   so that a job interrupted between two batches resumes after the last committed one.
 * - import_rows: the upload's valid rows staged in the database (the file is never held in memory);
 *   deleted batch by batch in the transaction that creates their links.
 * - import_problems: the final report's lines: invalid rows and conflicts, with line and reason.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const schema = db.schema.withSchema('links_api')
  await schema
    .alterTable('links')
    .addColumn('title', 'text')
    .addColumn('imported_clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('import_key', 'text')
    .execute()
  await sql`create unique index links_owner_import_key on links_api.links (owner_id, import_key) where import_key is not null`.execute(
    db,
  )

  await schema
    .createTable('import_jobs')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('owner_id', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    // receiving → queued → running → done; failed (resumable) when a batch could not commit.
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('lines_read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rows_staged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('conflicts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('invalid', 'integer', (c) => c.notNull().defaultTo(0))
    // The last line whose batch is committed: processing resumes after it.
    .addColumn('next_line', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    // The instance working on the job holds it until then; an expired lease means it died.
    .addColumn('lease_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute()
  await sql`create index import_jobs_owner_idx on links_api.import_jobs (owner_id, created_at desc)`.execute(
    db,
  )
  await sql`create index import_jobs_pending_idx on links_api.import_jobs (created_at) where state in ('queued', 'running')`.execute(
    db,
  )

  await schema
    .createTable('import_rows')
    .addColumn('job_id', 'uuid', (c) =>
      c.notNull().references('links_api.import_jobs.id').onDelete('cascade'),
    )
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('row', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_rows_pkey', ['job_id', 'line'])
    .execute()

  await schema
    .createTable('import_problems')
    .addColumn('job_id', 'uuid', (c) =>
      c.notNull().references('links_api.import_jobs.id').onDelete('cascade'),
    )
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('field', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_problems_pkey', ['job_id', 'line'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  const schema = db.schema.withSchema('links_api')
  await schema.dropTable('import_problems').execute()
  await schema.dropTable('import_rows').execute()
  await schema.dropTable('import_jobs').execute()
  await sql`drop index links_api.links_owner_import_key`.execute(db)
  await schema
    .alterTable('links')
    .dropColumn('import_key')
    .dropColumn('imported_clicks')
    .dropColumn('title')
    .execute()
}
