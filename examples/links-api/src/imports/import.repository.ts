import { type Kysely, sql, type Transaction } from 'kysely'
import type { ImportJobRow, LinksDatabase } from '../db/database.js'
import type { ImportRow } from './import-row.js'

type Db = Kysely<LinksDatabase> | Transaction<LinksDatabase>

export type ImportState = 'receiving' | 'queued' | 'running' | 'done' | 'failed' | 'incomplete'

export interface ImportJob {
  id: string
  ownerId: string
  format: string
  state: ImportState
  linesRead: number
  rowsStaged: number
  created: number
  skipped: number
  conflicts: number
  invalid: number
  nextLine: number
  error: string | null
  createdAt: Date
  updatedAt: Date
  finishedAt: Date | null
  /** The application that started it (null: before imports were counted). */
  clientId: string | null
  /** The hour its rows were counted in by the leash; null when they were not counted. */
  leashWindow: Date | null
}

export interface ImportProblem {
  line: number
  kind: 'invalid' | 'conflict' | 'skipped'
  field: string | null
  reason: string
}

export function toJob(row: ImportJobRow): ImportJob {
  return {
    id: row.id,
    ownerId: row.owner_id,
    format: row.format,
    state: row.state as ImportState,
    linesRead: row.lines_read,
    rowsStaged: row.rows_staged,
    created: row.created,
    skipped: row.skipped,
    conflicts: row.conflicts,
    invalid: row.invalid,
    nextLine: row.next_line,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    clientId: row.client_id,
    leashWindow: row.leash_window,
  }
}

export async function insertJob(
  db: Db,
  ownerId: string,
  clientId: string | null,
  format: string,
  now: Date,
): Promise<ImportJob> {
  const row = await db
    .insertInto('import_jobs')
    .values({
      owner_id: ownerId,
      client_id: clientId,
      format,
      state: 'receiving',
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return toJob(row)
}

/** Stages a chunk of the upload: its valid rows, its invalid lines, and the counters, together. */
export async function stageChunk(
  db: Kysely<LinksDatabase>,
  jobId: string,
  chunk: { rows: { line: number; row: ImportRow }[]; problems: ImportProblem[]; linesRead: number },
  now: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (chunk.rows.length > 0)
      await trx
        .insertInto('import_rows')
        .values(chunk.rows.map((r) => ({ job_id: jobId, line: r.line, row: JSON.stringify(r.row) })))
        .execute()
    await insertProblems(trx, jobId, chunk.problems)
    await trx
      .updateTable('import_jobs')
      .set((eb) => ({
        lines_read: eb('lines_read', '+', chunk.linesRead),
        rows_staged: eb('rows_staged', '+', chunk.rows.length),
        invalid: eb('invalid', '+', chunk.problems.filter((p) => p.kind === 'invalid').length),
        skipped: eb('skipped', '+', chunk.problems.filter((p) => p.kind === 'skipped').length),
        updated_at: now,
      }))
      .where('id', '=', jobId)
      .execute()
  })
}

export async function insertProblems(db: Db, jobId: string, problems: ImportProblem[]): Promise<void> {
  if (problems.length === 0) return
  await db
    .insertInto('import_problems')
    .values(problems.map((p) => ({ job_id: jobId, ...p })))
    .onConflict((oc) => oc.columns(['job_id', 'line']).doNothing())
    .execute()
}

export async function setJobState(
  db: Db,
  jobId: string,
  state: ImportState,
  now: Date,
  extra: { error?: string | null; fromStates?: ImportState[]; leashWindow?: Date | null } = {},
): Promise<ImportJob | undefined> {
  let query = db
    .updateTable('import_jobs')
    .set({
      state,
      updated_at: now,
      lease_until: null,
      ...(extra.error !== undefined ? { error: extra.error } : {}),
      ...(extra.leashWindow !== undefined ? { leash_window: extra.leashWindow } : {}),
      ...(state === 'done' ? { finished_at: now } : {}),
    })
    .where('id', '=', jobId)
  if (extra.fromStates) query = query.where('state', 'in', extra.fromStates)
  const row = await query.returningAll().executeTakeFirst()
  return row && toJob(row)
}

export async function deleteJob(db: Db, jobId: string): Promise<void> {
  await db.deleteFrom('import_jobs').where('id', '=', jobId).execute()
}

export async function findOwnedJob(db: Db, ownerId: string, id: string): Promise<ImportJob | undefined> {
  const row = await db
    .selectFrom('import_jobs')
    .selectAll()
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst()
  return row && toJob(row)
}

export async function listOwnedJobs(db: Db, ownerId: string, limit: number): Promise<ImportJob[]> {
  const rows = await db
    .selectFrom('import_jobs')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute()
  return rows.map(toJob)
}

/** The job's report lines after `afterLine`, in line order. */
export async function listProblems(
  db: Db,
  jobId: string,
  afterLine: number,
  limit: number,
): Promise<ImportProblem[]> {
  const rows = await db
    .selectFrom('import_problems')
    .select(['line', 'kind', 'field', 'reason'])
    .where('job_id', '=', jobId)
    .where('line', '>', afterLine)
    .orderBy('line')
    .limit(limit)
    .execute()
  return rows.map((r) => ({ ...r, kind: r.kind as ImportProblem['kind'] }))
}

/**
 * Takes the oldest job waiting (queued, or running under an expired lease: its instance died) and
 * holds it for `leaseSeconds`. SKIP LOCKED: two instances never take the same job.
 */
export async function claimJob(
  db: Kysely<LinksDatabase>,
  leaseSeconds: number,
): Promise<ImportJob | undefined> {
  // An upload whose instance died before its end can never complete: say so, once.
  await db
    .updateTable('import_jobs')
    .set({
      state: 'incomplete',
      error: 'The upload was interrupted; upload the file again.',
      updated_at: sql`now()`,
    })
    .where('state', '=', 'receiving')
    .where('updated_at', '<', sql<Date>`now() - interval '10 minutes'`)
    .execute()
  const result = await sql<ImportJobRow>`
    update links_api.import_jobs
       set state = 'running', lease_until = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
     where id = (select id from links_api.import_jobs
                  where state in ('queued', 'running') and (lease_until is null or lease_until < now())
                  order by created_at limit 1 for update skip locked)
    returning *`.execute(db)
  const row = result.rows[0]
  return row && toJob(row)
}

/** The next rows of the job after `afterLine`, in line order. */
export async function nextStagedRows(
  db: Db,
  jobId: string,
  afterLine: number,
  limit: number,
): Promise<{ line: number; row: ImportRow }[]> {
  const rows = await db
    .selectFrom('import_rows')
    .select(['line', 'row'])
    .where('job_id', '=', jobId)
    .where('line', '>', afterLine)
    .orderBy('line')
    .limit(limit)
    .execute()
  return rows.map((r) => ({
    line: r.line,
    row: (typeof r.row === 'string' ? JSON.parse(r.row) : r.row) as ImportRow,
  }))
}

/**
 * What the owner's links already hold of these rows: the import keys present, and for each custom
 * slug (lower case) taken, whether it is the owner's own link (never whose otherwise).
 */
export async function existingForRows(
  db: Db,
  ownerId: string,
  rows: ImportRow[],
): Promise<{ keys: Set<string>; slugs: Map<string, 'yours' | 'another user'> }> {
  const keys = rows.map((r) => r.key)
  const slugs = [...new Set(rows.flatMap((r) => (r.slug ? [r.slug.toLowerCase()] : [])))]
  const found = new Set<string>()
  const taken = new Map<string, 'yours' | 'another user'>()
  if (keys.length > 0) {
    const hits = await db
      .selectFrom('links')
      .select('import_key')
      .where('owner_id', '=', ownerId)
      .where('import_key', 'in', keys)
      .execute()
    for (const h of hits) if (h.import_key) found.add(h.import_key)
  }
  if (slugs.length > 0) {
    const hits = await db
      .selectFrom('links')
      .select([sql<string>`lower(slug)`.as('slug'), sql<boolean>`owner_id = ${ownerId}`.as('mine')])
      .where(sql<boolean>`lower(slug) in (${sql.join(slugs)})`)
      .execute()
    for (const h of hits) taken.set(h.slug, h.mine ? 'yours' : 'another user')
  }
  return { keys: found, slugs: taken }
}

/** Inserts links, skipping any that would break a unique index; returns the keys inserted. */
export async function insertImportedLinks(
  db: Db,
  ownerId: string,
  links: { row: ImportRow; slug: string }[],
  now: Date,
): Promise<Set<string>> {
  if (links.length === 0) return new Set()
  const inserted = await db
    .insertInto('links')
    .values(
      links.map(({ row, slug }) => ({
        owner_id: ownerId,
        slug,
        target_url: row.targetUrl,
        tags: row.tags,
        title: row.title,
        imported_clicks: row.clicks,
        import_key: row.key,
        created_at: row.createdAt ? new Date(row.createdAt) : now,
        updated_at: now,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .returning('import_key')
    .execute()
  return new Set(inserted.flatMap((r) => (r.import_key ? [r.import_key] : [])))
}

/**
 * Ends a batch: its staged rows gone, the counters and the resume point moved, the lease renewed.
 * False when the job's resume point is no longer `fromLine`: another instance took the job over (its
 * lease ran out) and did this batch; the caller then rolls back.
 */
export async function completeBatch(
  db: Db,
  jobId: string,
  batch: { fromLine: number; lastLine: number; created: number; skipped: number; conflicts: number },
  leaseSeconds: number,
  now: Date,
): Promise<boolean> {
  const moved = await db
    .updateTable('import_jobs')
    .set((eb) => ({
      next_line: batch.lastLine,
      created: eb('created', '+', batch.created),
      skipped: eb('skipped', '+', batch.skipped),
      conflicts: eb('conflicts', '+', batch.conflicts),
      lease_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
      updated_at: now,
    }))
    .where('id', '=', jobId)
    .where('next_line', '=', batch.fromLine)
    .where('state', '=', 'running')
    .executeTakeFirst()
  if (moved.numUpdatedRows === 0n) return false
  await db.deleteFrom('import_rows').where('job_id', '=', jobId).where('line', '<=', batch.lastLine).execute()
  return true
}
