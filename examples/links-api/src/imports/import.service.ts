import type { Readable } from 'node:stream'
import type { AppLeash, WritingApp } from '../../../shared/app-leash.js'
import type { LinksDatabase } from '../db/database.js'
import { LinksApiError } from '../errors.js'
import { type DryRunReport, dryRunImport } from './import-dry-run.js'
import { createImportRunner, type ImportRunnerDeps } from './import-runner.js'
import { REPORT_LINES } from './import-settings.js'
import { stageImport } from './import-staging.js'
import {
  findOwnedJob,
  type ImportJob,
  type ImportProblem,
  listOwnedJobs,
  listProblems,
  setJobState,
} from './import.repository.js'

export type { DryRunReport, ImportJob, ImportProblem }
export { DEFAULT_IMPORT_SETTINGS, type ImportSettings, REPORT_LINES } from './import-settings.js'

export interface ImportServiceDeps extends ImportRunnerDeps {
  publicUrl: string
  /** The limit on new links an application makes for each person (app-leash.ts): imports count too. */
  leash?: AppLeash<LinksDatabase> | undefined
}

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

/**
 * Importing links from another shortener, by stage. An upload is read as it arrives (never held
 * whole, import-reader.ts): a dry run reports what would happen (import-dry-run.ts); an import
 * stages the valid rows in the database (import-staging.ts), then a background runner
 * (import-runner.ts) turns them into links batch by batch, each batch one transaction (its links,
 * its tags, its report lines and the job's resume point together, import-batch.ts), yielding to
 * other requests between batches. A job left by a crash resumes after its last committed batch.
 * This factory wires the stages and answers for a user's jobs and their reports.
 */
export function createImportService(deps: ImportServiceDeps) {
  const { db, clock, settings } = deps
  const ownOrigin = new URL(deps.publicUrl).origin
  const runner = createImportRunner(deps)

  async function owned(ownerId: string, id: string): Promise<ImportJob> {
    const job = LINK_ID.test(id) ? await findOwnedJob(db, ownerId, id) : undefined
    if (!job) throw new ImportNotFoundError()
    return job
  }

  return {
    runner,

    /** Reads the upload and reports what an import would do, writing nothing. */
    dryRun: (ownerId: string, source: Readable, kind: 'csv' | 'jsonl'): Promise<DryRunReport> =>
      dryRunImport({ db, ownOrigin, settings }, ownerId, source, kind),

    /**
     * Reads the upload into a new job's staging rows and queues the job; answers once the whole
     * file is staged. A broken upload (too large, cut off, a bad header) leaves no job behind. With
     * `app` (the application acting, from its token) every valid row counts as a new link against
     * what its standing allows for this person this hour: more rows than remain is refused
     * (AppLimitReachedError), and leaves no job either.
     */
    async startImport(
      ownerId: string,
      source: Readable,
      kind: 'csv' | 'jsonl',
      app?: WritingApp,
    ): Promise<ImportJob> {
      const importing = app && deps.leash ? { app, leash: deps.leash } : undefined
      const queued = await stageImport({ db, clock, ownOrigin, settings }, ownerId, source, kind, importing)
      runner.kick()
      return queued
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
