import type { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { InvalidRequestError } from '../errors.js'
import { reportLine } from './import-problems.js'
import { readImport } from './import-reader.js'
import type { ImportRow } from './import-row.js'
import { type ImportSettings, STAGE_CHUNK } from './import-settings.js'
import {
  deleteJob,
  type ImportJob,
  type ImportProblem,
  insertJob,
  setJobState,
  stageChunk,
} from './import.repository.js'

/**
 * Reads the upload into a new job's staging rows (its invalid lines straight into its report) and
 * queues the job; answers once the whole file is staged. A broken upload (too large, cut off, a bad
 * header) leaves no job behind.
 */
export async function stageImport(
  deps: { db: Kysely<LinksDatabase>; clock: { now(): Date }; ownOrigin: string; settings: ImportSettings },
  ownerId: string,
  source: Readable,
  kind: 'csv' | 'jsonl',
): Promise<ImportJob> {
  const { db, clock, ownOrigin, settings } = deps
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
  return queued!
}
