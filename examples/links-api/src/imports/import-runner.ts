import { setImmediate as yieldToRequests } from 'node:timers/promises'
import { type ImportBatchDeps, JobTakenOverError, writeBatch } from './import-batch.js'
import { claimJob, type ImportJob, setJobState } from './import.repository.js'

export interface ImportRunnerDeps extends ImportBatchDeps {
  logger?: { error(obj: object, msg: string): void; info(obj: object, msg: string): void }
}

export type ImportRunner = ReturnType<typeof createImportRunner>

/**
 * The background runner: claims queued jobs (and those of a dead instance, after their lease) and
 * writes each batch by batch, yielding to other requests between batches. A failed batch leaves
 * its job failed at its last resume point.
 */
export function createImportRunner(deps: ImportRunnerDeps) {
  const { db, clock, settings } = deps
  let stopped = true
  let running: Promise<void> | undefined
  let again = false
  let timer: NodeJS.Timeout | undefined

  async function runJob(job: ImportJob): Promise<void> {
    for (let batch = 1; !stopped; batch++) {
      let more: boolean
      try {
        more = await writeBatch(deps, job, batch)
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

  return {
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
}
