/**
 * CI's dependency audit: `npm audit --omit=dev` must not report a high or critical advisory for a
 * package the server ships with. npm's own exit code cannot be used as the gate: it is non-zero both
 * for "vulnerabilities found" and for "the advisory service did not answer", and the registry mirror
 * some machines use answers the audit POST with 405. This reads npm's JSON report and tells them apart.
 *
 *   tsx scripts/audit-gate.ts                 runs `npm audit --omit=dev --json` and judges it
 *   tsx scripts/audit-gate.ts --report FILE   judges a saved report (tests)
 *
 * Exit 0: no high/critical advisory, or the advisory service was unreachable (a loud warning), unless
 * AUDIT_REQUIRED=1, which turns "unreachable" into a failure. Exit 1: high/critical found, or
 * AUDIT_REQUIRED=1 and no verdict. Exit 2: the report is not one npm writes.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'] as const
type Severity = (typeof SEVERITIES)[number]
const BLOCKING: ReadonlySet<Severity> = new Set(['high', 'critical'])

export type AuditVerdict =
  | { kind: 'clean'; counts: Record<Severity, number> }
  | { kind: 'vulnerable'; counts: Record<Severity, number>; packages: string[] }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'unreadable'; reason: string }

interface NpmAuditReport {
  auditReportVersion?: number
  vulnerabilities?: Record<string, { severity?: string }>
  metadata?: { vulnerabilities?: Partial<Record<Severity, number>> }
  statusCode?: number
  message?: string
  error?: unknown
}

/** Judges the text `npm audit --json` printed (format of npm 7 and later, auditReportVersion 2). */
export function judgeAuditReport(text: string): AuditVerdict {
  let report: NpmAuditReport
  try {
    report = JSON.parse(text) as NpmAuditReport
  } catch {
    return { kind: 'unreadable', reason: 'npm audit did not print JSON' }
  }
  if (typeof report !== 'object' || report === null) return { kind: 'unreadable', reason: 'not a report' }
  const totals = report.metadata?.vulnerabilities
  if (totals && typeof totals === 'object') {
    const counts = Object.fromEntries(SEVERITIES.map((s) => [s, Number(totals[s] ?? 0)])) as Record<
      Severity,
      number
    >
    const packages = Object.entries(report.vulnerabilities ?? {})
      .filter(([, v]) => BLOCKING.has(v.severity as Severity))
      .map(([name, v]) => `${name} (${v.severity})`)
      .sort()
    return counts.high + counts.critical > 0 || packages.length > 0
      ? { kind: 'vulnerable', counts, packages }
      : { kind: 'clean', counts }
  }
  if (report.error !== undefined || report.statusCode !== undefined) {
    const status = report.statusCode ? `HTTP ${report.statusCode}` : 'no answer'
    // The message names the registry URL only; npm never puts credentials in it.
    return { kind: 'unreachable', reason: `${status}: ${report.message ?? 'advisory service error'}` }
  }
  return { kind: 'unreadable', reason: 'no metadata.vulnerabilities in the report' }
}

/** The exit code and the lines CI prints for a verdict. */
export function gateOutcome(verdict: AuditVerdict, required: boolean): { exitCode: number; lines: string[] } {
  switch (verdict.kind) {
    case 'clean': {
      const summary = SEVERITIES.map((s) => `${verdict.counts[s]} ${s}`).join(', ')
      return { exitCode: 0, lines: [`npm audit: no high or critical advisory (${summary})`] }
    }
    case 'vulnerable':
      return {
        exitCode: 1,
        lines: [
          `npm audit: ${verdict.counts.high} high, ${verdict.counts.critical} critical advisories in production dependencies`,
          ...verdict.packages.map((p) => `  ${p}`),
          'Run `npm audit --omit=dev` for details; upgrade or replace the package.',
        ],
      }
    case 'unreachable':
      return {
        exitCode: required ? 1 : 0,
        lines: [
          `npm audit: WARNING: the advisory service did not answer (${verdict.reason}); dependencies were NOT audited.`,
          required
            ? 'AUDIT_REQUIRED=1: failing.'
            : 'Set AUDIT_REQUIRED=1 where the registry serves advisories to make this a failure.',
        ],
      }
    case 'unreadable':
      return { exitCode: 2, lines: [`npm audit: cannot judge the report: ${verdict.reason}`] }
  }
}

function runNpmAudit(): string {
  const result = spawnSync('npm', ['audit', '--omit=dev', '--json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  return result.stdout
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reportFlag = process.argv.indexOf('--report')
  const file = reportFlag >= 0 ? process.argv[reportFlag + 1] : undefined
  const text = file ? readFileSync(file, 'utf8') : runNpmAudit()
  const { exitCode, lines } = gateOutcome(judgeAuditReport(text), process.env.AUDIT_REQUIRED === '1')
  for (const line of lines) console.log(line)
  process.exitCode = exitCode
}
