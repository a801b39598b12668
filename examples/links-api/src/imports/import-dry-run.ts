import type { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { LinksDatabase } from '../db/database.js'
import { reportLine, takenReason } from './import-problems.js'
import { readImport } from './import-reader.js'
import type { ImportFormat, ImportRow, RowProblem } from './import-row.js'
import { type ImportSettings, REPORT_LINES, STAGE_CHUNK } from './import-settings.js'
import { existingForRows, type ImportProblem } from './import.repository.js'

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

/**
 * Reads the upload and reports what an import would do, writing nothing: each chunk of rows is
 * checked against the owner's links (the same link already there, a slug taken) and the earlier
 * lines of the file.
 */
export async function dryRunImport(
  deps: { db: Kysely<LinksDatabase>; ownOrigin: string; settings: ImportSettings },
  ownerId: string,
  source: Readable,
  kind: 'csv' | 'jsonl',
): Promise<DryRunReport> {
  const { db, ownOrigin, settings } = deps
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
}
