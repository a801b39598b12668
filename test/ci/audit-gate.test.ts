import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gateOutcome, judgeAuditReport } from '../../scripts/audit-gate.js'

/** Reports in the shape npm 7+ prints for `npm audit --json` (auditReportVersion 2). */
function report(counts: Partial<Record<'low' | 'moderate' | 'high' | 'critical', number>>, vulns = {}) {
  const full = { info: 0, low: 0, moderate: 0, high: 0, critical: 0, ...counts }
  const total = Object.values(full).reduce((a, b) => a + b, 0)
  return JSON.stringify({
    auditReportVersion: 2,
    vulnerabilities: vulns,
    metadata: { vulnerabilities: { ...full, total }, dependencies: { prod: 120, dev: 0, total: 120 } },
  })
}

const UNREACHABLE = JSON.stringify({
  message: '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk',
  method: 'POST',
  statusCode: 405,
  body: '',
  error: { summary: '', detail: '' },
})

describe('dependency audit gate (issue 8, CI)', () => {
  it('passes a report with only low and moderate advisories', () => {
    const verdict = judgeAuditReport(report({ low: 2, moderate: 1 }, { a: { severity: 'moderate' } }))
    expect(verdict.kind).toBe('clean')
    expect(gateOutcome(verdict, true).exitCode).toBe(0)
  })

  it('fails on a high advisory and names the package', () => {
    const verdict = judgeAuditReport(report({ high: 1 }, { 'fast-xml': { severity: 'high' } }))
    const outcome = gateOutcome(verdict, false)
    expect(outcome.exitCode).toBe(1)
    expect(outcome.lines.join('\n')).toContain('fast-xml (high)')
  })

  it('fails on a critical advisory', () => {
    const verdict = judgeAuditReport(report({ critical: 1 }, { pkg: { severity: 'critical' } }))
    expect(gateOutcome(verdict, false).exitCode).toBe(1)
  })

  it('tells an unreachable advisory service apart from a clean result, failing only when required', () => {
    const verdict = judgeAuditReport(UNREACHABLE)
    expect(verdict).toMatchObject({ kind: 'unreachable' })
    const lenient = gateOutcome(verdict, false)
    expect(lenient.exitCode).toBe(0)
    expect(lenient.lines[0]).toMatch(/NOT audited/)
    expect(gateOutcome(verdict, true).exitCode).toBe(1)
  })

  it('refuses to judge output that is not an npm audit report', () => {
    expect(gateOutcome(judgeAuditReport('npm ERR! something'), false).exitCode).toBe(2)
    expect(gateOutcome(judgeAuditReport('{"hello":1}'), false).exitCode).toBe(2)
  })

  it('runs as a script on a saved report and exits with the verdict', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-gate-'))
    const file = join(dir, 'report.json')
    writeFileSync(file, report({ high: 1 }, { lodash: { severity: 'high' } }))
    const run = spawnSync('npx', ['tsx', 'scripts/audit-gate.ts', '--report', file], { encoding: 'utf8' })
    expect(run.status).toBe(1)
    expect(run.stdout).toContain('lodash (high)')
  })
})
