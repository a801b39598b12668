import type { Readable } from 'node:stream'
import { setImmediate as yieldToRequests } from 'node:timers/promises'
import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { InvalidRequestError, LinksApiError } from '../errors.js'
import { randomSlug } from '../links/slug.js'
import { type ImportLimits, readImport } from './import-reader.js'
import type { ImportFormat, ImportRow, RowProblem } from './import-row.js'
import {
  claimJob,
  completeBatch,
  deleteJob,
  existingForRows,
  findOwnedJob,
  type ImportJob,
  type ImportProblem,
  insertImportedLinks,
  insertJob,
  insertProblems,
  listOwnedJobs,
  listProblems,
  nextStagedRows,
  setJobState,
  stageChunk,
} from './import.repository.js'

export type { ImportJob, ImportProblem }

export interface ImportSettings extends ImportLimits {
  /** Rows per committed batch (LINKS_IMPORT_BATCH_SIZE). */
  batchSize: number
  /** How long a job stays with the instance working on it without news (a dead instance's job is taken over after). */
  leaseSeconds: number
}

export const DEFAULT_IMPORT_SETTINGS: ImportSettings = {
  maxBytes: 50 * 1024 * 1024,
  maxRows: 200_000,
  batchSize: 500,
  leaseSeconds: 30,
}

export interface ImportServiceDeps {
  db: Kysely<LinksDatabase>
  clock: { now(): Date }
  publicUrl: string
  settings: ImportSettings
  logger?: { error(obj: object, msg: string): void; info(obj: object, msg: string): void }
  /** Tests: runs inside each batch's transaction, before it commits (a throw aborts the batch). */
  beforeBatchCommit?: (job: ImportJob, batch: number) => void | Promise<void>
}

/** What a dry run found: the counts, and the problem lines (the first REPORT_LINES of them). */
export interface DryRunReport {
  format: ImportFormat
  linesRead: number
  wouldCreate: number
  skipped: number
  conflicts: number
  invalid: number
  problems: ImportProblem[]
  problemsTruncated: boolean
}

/** Report lines shown in one answer (dry run, or a page of a job's report). */
export const REPORT_LINES = 1000
/** Rows staged per transaction while an upload arrives. */
const STAGE_CHUNK = 500
const LINK_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** 404: no such import for this user (another user's import is not theirs to know about). */
export class ImportNotFoundError extends LinksApiError {
  override name = 'ImportNotFoundError'
  readonly code = 'not_found'
  readonly status = 404
  constructor() {
    super('No import with this id.')
  }
}

/** 409: the import is in a state where this cannot be done (resuming a finished one). */
export class ImportStateError extends LinksApiError {
  override name = 'ImportStateError'
  readonly code = 'conflict'
  readonly status = 409
}

/** The job moved on without us (another instance took it over after our lease ran out). */
class JobTakenOverError extends Error {
  override name = 'JobTakenOverError'
}

/** The report line of a row that is not imported: invalid, or skipped on purpose (an archived Bitlink). */
const reportLine = (line: number, { field, reason, skip }: RowProblem): ImportProblem => ({
  line,
  kind: skip ? 'skipped' : 'invalid',
  field,
  reason,
})

const takenReason = (slug: string, by: 'yours' | 'another user' | 'earlier line') =>
  by === 'yours'
    ? `the slug "${slug}" is taken by another of your links`
    : by === 'another user'
      ? `the slug "${slug}" is taken by another user`
      : `the slug "${slug}" is used by an earlier line of this file`

/**
 * Importing links from another shortener. An upload is read as it arrives (never held whole):
 * a dry run reports what would happen; an import stages the valid rows in the database, then a
 * background runner turns them into links batch by batch, each batch one transaction (its links,
 * its tags, its report lines and the job's resume point together), yielding to other requests
 * between batches. A job left by a crash resumes after its last committed batch.
 */
export function createImportService(deps: ImportServiceDeps) {
  const { db, clock, settings } = deps
  const ownOrigin = new URL(deps.publicUrl).origin

  async function owned(ownerId: string, id: string): Promise<ImportJob> {
    const job = LINK_ID.test(id) ? await findOwnedJob(db, ownerId, id) : undefined
    if (!job) throw new ImportNotFoundError()
    return job
  }

  // ---- the background runner ---------------------------------------------------------------------

  let stopped = true
  let running: Promise<void> | undefined
  let again = false
  let timer: NodeJS.Timeout | undefined

  /**
   * Classifies and creates one batch of a job's staged rows in one transaction; false when there
   * were none left (the job is done).
   */
  async function runBatch(job: ImportJob, batchNumber: number): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      const staged = await nextStagedRows(trx, job.id, job.nextLine, settings.batchSize)
      if (staged.length === 0) {
        await setJobState(trx, job.id, 'done', clock.now())
        return false
      }
      const now = clock.now()
      const existing = await existingForRows(
        trx,
        job.ownerId,
        staged.map((s) => s.row),
      )
      const problems: ImportProblem[] = []
      const keys = new Set(existing.keys)
      const slugs = new Map<string, string>()
      let skipped = 0
      const toCreate: { line: number; row: ImportRow; slug: string; custom: boolean }[] = []
      for (const { line, row } of staged) {
        if (keys.has(row.key)) {
          skipped++
          continue
        }
        const lower = row.slug?.toLowerCase()
        if (row.slug && lower) {
          const by = existing.slugs.get(lower) ?? (slugs.has(lower) ? 'yours' : undefined)
          if (by) {
            problems.push({ line, kind: 'conflict', field: 'slug', reason: takenReason(row.slug, by) })
            continue
          }
          slugs.set(lower, row.key)
        }
        keys.add(row.key)
        toCreate.push({ line, row, slug: row.slug ?? randomSlug(), custom: row.slug !== null })
      }
      let pending = toCreate
      let created = 0
      for (let attempt = 0; pending.length > 0; attempt++) {
        const inserted = await insertImportedLinks(trx, job.ownerId, pending, now)
        created += inserted.size
        const missed = pending.filter((p) => !inserted.has(p.row.key))
        // A random slug that collided gets another; anything else lost a race with another writer.
        const retry = missed.filter((p) => !p.custom && attempt < 5)
        for (const p of missed.filter((m) => !retry.includes(m))) {
          const again = await existingForRows(trx, job.ownerId, [p.row])
          if (again.keys.has(p.row.key)) skipped++
          else
            problems.push({
              line: p.line,
              kind: 'conflict',
              field: 'slug',
              reason: takenReason(p.slug, again.slugs.get(p.slug.toLowerCase()) ?? 'another user'),
            })
        }
        pending = retry.map((p) => ({ ...p, slug: randomSlug() }))
      }
      await insertProblems(trx, job.id, problems)
      const lastLine = staged.at(-1)!.line
      const completed = await completeBatch(
        trx,
        job.id,
        { fromLine: job.nextLine, lastLine, created, skipped, conflicts: problems.length },
        settings.leaseSeconds,
        now,
      )
      if (!completed) throw new JobTakenOverError()
      await deps.beforeBatchCommit?.(job, batchNumber)
      job.nextLine = lastLine
      return true
    })
  }

  async function runJob(job: ImportJob): Promise<void> {
    for (let batch = 1; !stopped; batch++) {
      let more: boolean
      try {
        more = await runBatch(job, batch)
      } catch (err) {
        if (stopped || err instanceof JobTakenOverError) return
        // Nothing of the batch was written; the job keeps its resume point.
        deps.logger?.error({ err, importId: job.id }, 'import batch failed; the job can be resumed')
        await setJobState(db, job.id, 'failed', clock.now(), {
          error: 'A batch could not be written; nothing of it was kept. Resume the import to continue.',
        }).catch(() => {})
        return
      }
      if (!more) return
      // Other requests run between two batches.
      await yieldToRequests()
    }
  }

  async function drain(): Promise<void> {
    do {
      again = false
      for (;;) {
        if (stopped) return
        let job: ImportJob | undefined
        try {
          job = await claimJob(db, settings.leaseSeconds)
        } catch (err) {
          deps.logger?.error({ err }, 'import runner: cannot look for jobs')
          return
        }
        if (!job) break
        await runJob(job)
      }
    } while (again && !stopped)
  }

  function kick(): void {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = drain().finally(() => {
      running = undefined
    })
  }

  const runner = {
    /** Starts working on waiting jobs, and looks again every lease period (a dead instance's jobs). */
    start(): void {
      if (!stopped) return
      stopped = false
      kick()
      timer = setInterval(kick, settings.leaseSeconds * 1000)
      timer.unref()
    },
    /** Stops after the batch in progress (whose transaction commits or rolls back, never half). */
    async stop(): Promise<void> {
      stopped = true
      if (timer) clearInterval(timer)
      await running
    },
    kick,
    /** Resolves when the runner has nothing in progress (tests). */
    async idle(): Promise<void> {
      while (running) await running
    },
  }

  // ---- uploads -----------------------------------------------------------------------------------

  return {
    runner,

    /** Reads the upload and reports what an import would do, writing nothing. */
    async dryRun(ownerId: string, source: Readable, kind: 'csv' | 'jsonl'): Promise<DryRunReport> {
      const report: DryRunReport = {
        format: 'csv',
        linesRead: 0,
        wouldCreate: 0,
        skipped: 0,
        conflicts: 0,
        invalid: 0,
        problems: [],
        problemsTruncated: false,
      }
      const seenKeys = new Set<string>()
      const seenSlugs = new Set<string>()
      const note = (problem: ImportProblem) => {
        if (report.problems.length < REPORT_LINES) report.problems.push(problem)
        else report.problemsTruncated = true
      }
      // Invalid lines wait with the rows, so the report lists every problem in line order.
      let pending: ({ line: number; row: ImportRow } | { line: number; problem: RowProblem })[] = []
      const check = async () => {
        const existing = await existingForRows(
          db,
          ownerId,
          pending.flatMap((p) => ('row' in p ? [p.row] : [])),
        )
        for (const item of pending) {
          if ('problem' in item) {
            const problem = reportLine(item.line, item.problem)
            if (problem.kind === 'skipped') report.skipped++
            else report.invalid++
            note(problem)
            continue
          }
          const { line, row } = item
          if (existing.keys.has(row.key) || seenKeys.has(row.key)) {
            report.skipped++
            continue
          }
          const lower = row.slug?.toLowerCase()
          if (row.slug && lower) {
            const by = existing.slugs.get(lower) ?? (seenSlugs.has(lower) ? 'earlier line' : undefined)
            if (by) {
              report.conflicts++
              note({ line, kind: 'conflict', field: 'slug', reason: takenReason(row.slug, by) })
              continue
            }
            seenSlugs.add(lower)
          }
          seenKeys.add(row.key)
          report.wouldCreate++
        }
        pending = []
      }
      for await (const item of readImport(source, kind, ownOrigin, settings)) {
        if (item.kind === 'format') {
          report.format = item.format
          continue
        }
        report.linesRead++
        pending.push(item.kind === 'invalid' ? { line: item.line, problem: item.problem } : item)
        if (pending.length >= STAGE_CHUNK) await check()
      }
      await check()
      return report
    },

    /**
     * Reads the upload into a new job's staging rows and queues the job; answers once the whole
     * file is staged. A broken upload (too large, cut off, a bad header) leaves no job behind.
     */
    async startImport(ownerId: string, source: Readable, kind: 'csv' | 'jsonl'): Promise<ImportJob> {
      let job: ImportJob | undefined
      let rows: { line: number; row: ImportRow }[] = []
      let problems: ImportProblem[] = []
      let linesRead = 0
      const flush = async () => {
        if (!job) return
        await stageChunk(db, job.id, { rows, problems, linesRead }, clock.now())
        rows = []
        problems = []
        linesRead = 0
      }
      try {
        for await (const item of readImport(source, kind, ownOrigin, settings)) {
          if (item.kind === 'format') {
            job = await insertJob(db, ownerId, item.format, clock.now())
            continue
          }
          linesRead++
          if (item.kind === 'invalid') problems.push(reportLine(item.line, item.problem))
          else rows.push(item)
          if (rows.length + problems.length >= STAGE_CHUNK) await flush()
        }
        await flush()
      } catch (err) {
        if (job) await deleteJob(db, job.id).catch(() => {})
        throw err
      }
      if (!job) throw new InvalidRequestError('the file is empty')
      const queued = await setJobState(db, job.id, 'queued', clock.now())
      runner.kick()
      return queued!
    },

    getImport: owned,

    listImports: (ownerId: string) => listOwnedJobs(db, ownerId, 50),

    /** The job and a page of its report lines (invalid lines and conflicts), after `afterLine`. */
    async importReport(ownerId: string, id: string, afterLine: number) {
      const job = await owned(ownerId, id)
      const problems = await listProblems(db, job.id, afterLine, REPORT_LINES + 1)
      const more = problems.length > REPORT_LINES
      return {
        job,
        problems: problems.slice(0, REPORT_LINES),
        nextAfter: more ? problems[REPORT_LINES - 1]!.line : undefined,
      }
    },

    /** Puts a failed job back in the queue (or wakes the runner for one whose instance died). */
    async resumeImport(ownerId: string, id: string): Promise<ImportJob> {
      const job = await owned(ownerId, id)
      if (job.state === 'done')
        throw new ImportStateError('This import is finished; there is nothing to resume.')
      if (job.state === 'receiving') throw new ImportStateError('This import is still receiving its file.')
      if (job.state === 'incomplete')
        throw new ImportStateError('The upload of this import was interrupted; upload the file again.')
      const resumed =
        job.state === 'failed'
          ? ((await setJobState(db, job.id, 'queued', clock.now(), {
              error: null,
              fromStates: ['failed'],
            })) ?? job)
          : job
      runner.kick()
      return resumed
    },
  }
}

export type ImportService = ReturnType<typeof createImportService>
