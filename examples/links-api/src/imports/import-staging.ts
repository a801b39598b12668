import type { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { InvalidRequestError } from '../errors.js'
import { reportLine } from './import-problems.js'
import { readImport } from './import-reader.js'
import type { ImportRow } from './import-row.js'
import type { AppLeash, WritingApp } from '../../../shared/app-leash.js'
import { type ImportSettings, STAGE_CHUNK } from './import-settings.js'
import {
  deleteJob,
  type ImportJob,
  type ImportProblem,
  insertJob,
  setJobState,
  stageChunk,
} from './import.repository.js'

/** The leash on the application importing (app-leash.ts): its rows count as new links. */
export interface ImportingApp {
  app: WritingApp
  leash: AppLeash<LinksDatabase>
}

/**
 * Reads the upload into a new job's staging rows (its invalid lines straight into its report) and
 * queues the job; answers once the whole file is staged. A broken upload (too large, cut off, a bad
 * header) leaves no job behind. With `importing`, every valid row counts against what the
 * application may still create for this person this hour, all at once when the job is queued (the
 * runner gives back the rows that make no link): an upload with more rows than remain is refused
 * (AppLimitReachedError) as soon as it has them, before its end, and leaves no job behind either.
 */
export async function stageImport(
  deps: { db: Kysely<LinksDatabase>; clock: { now(): Date }; ownOrigin: string; settings: ImportSettings },
  ownerId: string,
  source: Readable,
  kind: 'csv' | 'jsonl',
  importing?: ImportingApp,
): Promise<ImportJob> {
  const { db, clock, ownOrigin, settings } = deps
  // What the application may still create for this person this hour (null: no limit of its own).
  const budget = importing ? await importing.leash.remaining(ownerId, importing.app) : null
  if (importing && budget === 0) throw importing.leash.refusal(importing.app)
  let job: ImportJob | undefined
  let rows: { line: number; row: ImportRow }[] = []
  let problems: ImportProblem[] = []
  let linesRead = 0
  let valid = 0
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
        job = await insertJob(db, ownerId, importing?.app.clientId ?? null, item.format, clock.now())
        continue
      }
      linesRead++
      if (item.kind === 'invalid') problems.push(reportLine(item.line, item.problem))
      else {
        rows.push(item)
        valid++
        if (importing && budget !== null && valid > budget)
          throw importing.leash.refusal(importing.app, { asked: valid, remaining: budget, atLeast: true })
      }
      if (rows.length + problems.length >= STAGE_CHUNK) await flush()
    }
    await flush()
    if (!job) throw new InvalidRequestError('the file is empty')
    const staged = job
    // The rows are counted in the transaction that queues the job: all of them or no job.
    const queued = await db.transaction().execute(async (trx) => {
      const leashWindow =
        importing && budget !== null && valid > 0
          ? await importing.leash.chargeMany(ownerId, importing.app, valid, trx)
          : null
      return setJobState(trx, staged.id, 'queued', clock.now(), { leashWindow })
    })
    return queued!
  } catch (err) {
    if (job) await deleteJob(db, job.id).catch(() => {})
    throw err
  }
}
