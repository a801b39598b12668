import type { RowProblem } from './import-row.js'
import type { ImportProblem } from './import.repository.js'

/** The report line of a row that is not imported: invalid, or skipped on purpose (an archived Bitlink). */
export const reportLine = (line: number, { field, reason, skip }: RowProblem): ImportProblem => ({
  line,
  kind: skip ? 'skipped' : 'invalid',
  field,
  reason,
})

/** Why a row's custom slug cannot be had: who holds it. */
export const takenReason = (slug: string, by: 'yours' | 'another user' | 'earlier line') =>
  by === 'yours'
    ? `the slug "${slug}" is taken by another of your links`
    : by === 'another user'
      ? `the slug "${slug}" is taken by another user`
      : `the slug "${slug}" is used by an earlier line of this file`
