import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { randomSlug } from '../links/slug.js'
import { giveBack } from '../../../shared/app-leash.js'
import { takenReason } from './import-problems.js'
import type { ImportRow } from './import-row.js'
import type { ImportSettings } from './import-settings.js'
import {
  completeBatch,
  existingForRows,
  type ImportJob,
  type ImportProblem,
  insertImportedLinks,
  insertProblems,
  nextStagedRows,
  setJobState,
} from './import.repository.js'

export interface ImportBatchDeps {
  db: Kysely<LinksDatabase>
  clock: { now(): Date }
  settings: ImportSettings
  /** Tests: runs inside each batch's transaction, before it commits (a throw aborts the batch). */
  beforeBatchCommit?: (job: ImportJob, batch: number) => void | Promise<void>
}

/** The job moved on without us (another instance took it over after our lease ran out). */
export class JobTakenOverError extends Error {
  override name = 'JobTakenOverError'
}

/**
 * Classifies and creates one batch of a job's staged rows in one transaction (its links, its
 * report lines and the job's resume point together); false when there were none left (the job is
 * done).
 */
export async function writeBatch(
  deps: ImportBatchDeps,
  job: ImportJob,
  batchNumber: number,
): Promise<boolean> {
  const { db, clock, settings } = deps
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
    // The leash counted every staged row when the job was queued: those that made no link
    // (duplicates, conflicts) are given back with the batch.
    if (job.clientId && job.leashWindow)
      await giveBack<LinksDatabase>(
        trx,
        { ownerId: job.ownerId, clientId: job.clientId, windowStart: job.leashWindow },
        staged.length - created,
      )
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
