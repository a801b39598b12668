import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The verdict on one run of the official MCP conformance suite against the baseline
 * (.ci/conformance-baseline.json): which failures are known (each with its reason), which are not,
 * and which baseline entries no longer fail (stale: the entry must go). The suite's own
 * `--expected-failures` cannot tell the two protocol revisions apart, nor carry a reason, so the
 * runner reads the suite's checks.json files and judges here.
 */

/** One check of a scenario as the suite writes it in checks.json. */
export interface SuiteCheck {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO' | string
  errorMessage?: string
}

/** Per leg (`2025-11-25`, `2026-07-28`, `authorization`): `scenario` or `scenario:check-id` → reason. */
export type Baseline = Record<string, Record<string, string>>

export interface Verdict {
  /** `leg scenario:check: message` of every failure the baseline does not excuse. */
  unexpected: string[]
  /** Baseline entries of this leg that did not fail (or whose scenario did not run). */
  stale: string[]
  /** Failures the baseline excuses, with its reason. */
  known: string[]
  /** Scenarios the leg had to run and pass entirely that did not. */
  missing: string[]
}

const RESULT_DIR = /^(?:server|authorization-server)-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

/** Every scenario's checks in an output directory of the suite (`-o`), by scenario name. */
export function readResults(dir: string): Map<string, SuiteCheck[]> {
  const results = new Map<string, SuiteCheck[]>()
  if (!existsSync(dir)) return results
  for (const entry of readdirSync(dir)) {
    const name = RESULT_DIR.exec(entry)?.[1]
    const file = join(dir, entry, 'checks.json')
    if (name === undefined || !existsSync(file)) continue
    results.set(name, JSON.parse(readFileSync(file, 'utf8')) as SuiteCheck[])
  }
  return results
}

export function judge(
  leg: string,
  results: ReadonlyMap<string, readonly SuiteCheck[]>,
  baseline: Baseline,
  mustRun: readonly string[],
): Verdict {
  const excused = baseline[leg] ?? {}
  const verdict: Verdict = { unexpected: [], stale: [], known: [], missing: [] }
  const used = new Set<string>()
  for (const name of mustRun) if (!results.has(name)) verdict.missing.push(`${leg} ${name}: did not run`)
  for (const [scenario, checks] of results) {
    const wholeReason = excused[scenario]
    const failed = checks.filter((check) => check.status === 'FAILURE')
    if (wholeReason !== undefined) {
      if (failed.length > 0) {
        used.add(scenario)
        verdict.known.push(`${leg} ${scenario}: ${wholeReason}`)
      }
      continue
    }
    for (const check of failed) {
      const key = `${scenario}:${check.id}`
      const reason = excused[key]
      if (reason === undefined) verdict.unexpected.push(`${leg} ${key}: ${check.errorMessage ?? 'failed'}`)
      else if (!used.has(key)) {
        used.add(key)
        verdict.known.push(`${leg} ${key}: ${reason}`)
      }
    }
  }
  for (const entry of Object.keys(excused))
    if (!used.has(entry)) verdict.stale.push(`${leg} ${entry}: no longer fails (remove it from the baseline)`)
  return verdict
}
