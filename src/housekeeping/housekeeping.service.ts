import { type Kysely, sql } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { EVENT_UNTIL_LEEWAY_SECONDS } from '../events/event-feed.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { createPeriodicTask } from '../lib/periodic-task.js'
import type { Metrics } from '../metrics/metrics.js'
import {
  type Counts,
  type Cutoffs,
  HOUSEKEEPING_STEPS,
  HOUSEKEEPING_TABLES,
  type HousekeepingStep,
  type HousekeepingTable,
  inLockedBatch,
} from './housekeeping.repository.js'

/**
 * completed: nothing over is left; busy: another instance held the lock (it carries on); stopped: the
 * server is stopping; failed: the database refused (the error is logged, the next run tries again).
 */
export type HousekeepingOutcome = 'completed' | 'busy' | 'stopped' | 'failed'

export interface HousekeepingRun {
  outcome: Exclude<HousekeepingOutcome, 'failed'>
  deleted: Record<HousekeepingTable, number>
  /** Batch transactions per step (each deletes at most HOUSEKEEPING_BATCH_SIZE rows). */
  batches: Record<HousekeepingStep, number>
  durationSeconds: number
}

export interface HousekeepingDeps {
  db: Kysely<Database>
  clock: Clock
  logger: Logger
  metrics: Pick<Metrics, 'housekeepingDeleted' | 'housekeepingDuration'>
  config: Pick<
    Config,
    | 'housekeepingInterval'
    | 'housekeepingBatchSize'
    | 'housekeepingReplayHorizon'
    | 'accessTokenTtl'
    | 'auditRetention'
    | 'refreshReuseWindow'
  >
  /** The event feed's rule: a stream not polled since this time is gone. */
  eventStreamIdleSince(now: Date): Date
  /** Runs after the table steps: removes unused dynamic registrations (their count). */
  afterSteps?: (batchSize: number) => Promise<number>
}

/**
 * Why each kind of row goes when it goes (docs/operating.md "Housekeeping"):
 * - whatever ends at expires_at waits a minute more (EVENT_UNTIL_LEEWAY_SECONDS), so that an instance
 *   whose clock is a little behind never finds a row gone that it still takes for live;
 * - an audit event stays AUDIT_RETENTION (400 days by default), then goes like any other row;
 * - a refresh family stays REPLAY_HORIZON after its revocation or expiry, so that a rotated token
 *   presented again is still recognised as a theft signal; after an expiry at least an access token's
 *   lifetime plus that minute, so that introspection of its last access tokens answers as before;
 * - a refresh token's sealed successor is wiped as soon as its retry window (REFRESH_REUSE_WINDOW) is
 *   over: the rotation never reads it later, and a secret is held no longer than it serves.
 */
export function housekeepingCutoffs(
  now: Date,
  config: HousekeepingDeps['config'],
  streamsIdleSince: Date,
): Cutoffs {
  const horizon = config.housekeepingReplayHorizon
  return {
    expiredBefore: addSeconds(now, -EVENT_UNTIL_LEEWAY_SECONDS),
    familiesRevokedBefore: addSeconds(now, -horizon),
    familiesExpiredBefore: addSeconds(
      now,
      -Math.max(horizon, config.accessTokenTtl + EVENT_UNTIL_LEEWAY_SECONDS),
    ),
    eventsUntil: now,
    streamsIdleSince,
    auditBefore: addSeconds(now, -config.auditRetention),
    successorsRotatedBefore: addSeconds(now, -config.refreshReuseWindow),
  }
}

/** Deletes expired rows in bounded batches, on one instance at a time, every HOUSEKEEPING_INTERVAL. */
/**
 * Whether PostgreSQL's autovacuum is off. Housekeeping deletes rows; autovacuum is what makes their
 * space reusable. Without it the tables housekeeping keeps flat in rows still grow on disk without
 * bound (the soak bench measured 214 → 391 MB for 35,000 refresh tokens in 30 minutes).
 */
export async function autovacuumIsOff(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ setting: string }>`select current_setting('autovacuum') as setting`.execute(db)
  return rows[0]?.setting === 'off'
}

export function createHousekeepingService(deps: HousekeepingDeps) {
  const { db, clock, config, logger, metrics } = deps
  const task = createPeriodicTask({ intervalMs: config.housekeepingInterval * 1000, run: runOnce })

  async function runOnce(): Promise<HousekeepingRun> {
    const started = performance.now()
    const deleted = Object.fromEntries(HOUSEKEEPING_TABLES.map((t) => [t, 0])) as HousekeepingRun['deleted']
    const batches = Object.fromEntries(
      HOUSEKEEPING_STEPS.map((s) => [s.name, 0]),
    ) as HousekeepingRun['batches']
    const now = clock.now()
    const cutoffs = housekeepingCutoffs(now, config, deps.eventStreamIdleSince(now))
    const finish = (outcome: HousekeepingOutcome) => {
      const durationSeconds = (performance.now() - started) / 1000
      // Every table's series, zeros too: a rate() over it works from the first run.
      for (const table of HOUSEKEEPING_TABLES) metrics.housekeepingDeleted.inc({ table }, deleted[table])
      metrics.housekeepingDuration.observe({ outcome }, durationSeconds)
      return { deleted, batches, durationSeconds }
    }
    const add = (counts: Counts) => {
      for (const [table, n] of Object.entries(counts)) deleted[table as HousekeepingTable] += n
    }
    try {
      for (const step of HOUSEKEEPING_STEPS) {
        for (let more = true; more;) {
          if (task.stopped) return log('stopped', finish('stopped'))
          const result = await inLockedBatch(db, (trx) =>
            step.batch(trx, cutoffs, config.housekeepingBatchSize),
          )
          if (!result) return log('busy', finish('busy'))
          batches[step.name]++
          add(result.deleted)
          more = result.more
        }
      }
      // Dynamic registrations unused for their time (issue 27): rows of clients, not a table of ours.
      await deps.afterSteps?.(config.housekeepingBatchSize)
      return log('completed', finish('completed'))
    } catch (err) {
      const { durationSeconds } = finish('failed')
      logger.error(
        { err, deleted, durationMs: Math.round(durationSeconds * 1000) },
        'housekeeping run failed',
      )
      throw err
    }
  }

  function log(outcome: HousekeepingRun['outcome'], run: Omit<HousekeepingRun, 'outcome'>): HousekeepingRun {
    const { deleted, durationSeconds } = run
    logger.info({ outcome, deleted, durationMs: Math.round(durationSeconds * 1000) }, 'housekeeping run')
    return { outcome, ...run }
  }

  return {
    /** One run now; runs of this process never overlap (a second waits for the first). */
    run: task.run,
    /**
     * Starts the schedule: the first run one interval after the start (0: never). Says once, at
     * `warn`, when the database's autovacuum is off (the answer resolves after that check).
     */
    start(): Promise<void> {
      task.start()
      if (config.housekeepingInterval === 0) return Promise.resolve()
      return autovacuumIsOff(db).then(
        (off) => {
          if (off)
            logger.warn(
              'PostgreSQL autovacuum is off: housekeeping deletes expired rows, but their space is only reused after a VACUUM; the tables will grow on disk. Turn autovacuum on (docs/operating.md, Housekeeping) or run VACUUM on a schedule',
            )
        },
        (err: unknown) => logger.debug({ err }, 'autovacuum setting not read'),
      )
    },
    /** Stops the schedule and waits for a run under way, which ends after its current batch. */
    stop: task.stop,
  }
}

export type HousekeepingService = ReturnType<typeof createHousekeepingService>
