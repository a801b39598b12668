import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { judge, readResults, type SuiteCheck } from '../../scripts/conformance-judge.js'

/** An output directory of the suite (`-o`) with these scenarios' checks.json, as it names them. */
function outputDir(scenarios: Record<string, SuiteCheck[]>) {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-judge-'))
  for (const [name, checks] of Object.entries(scenarios)) {
    const entry = join(dir, `server-${name}-2026-11-27T11-33-25-915Z`)
    mkdirSync(entry)
    writeFileSync(join(entry, 'checks.json'), JSON.stringify(checks))
  }
  return dir
}

const pass = (id: string): SuiteCheck => ({ id, status: 'SUCCESS' })
const fail = (id: string): SuiteCheck => ({ id, status: 'FAILURE', errorMessage: `${id} failed` })

describe('the conformance verdict', () => {
  const results = readResults(
    outputDir({
      'server-stateless': [pass('discover'), fail('diagnostic-tool'), { id: 'should', status: 'WARNING' }],
      'prompts-list': [fail('prompts-list')],
      'tools-list': [pass('tools-list')],
    }),
  )

  it('reads every scenario of an output directory by its name', () => {
    expect([...results.keys()].sort()).toEqual(['prompts-list', 'server-stateless', 'tools-list'])
  })

  it('failures the baseline names, whole or by check, are known; warnings are not failures', () => {
    const verdict = judge(
      '2026-07-28',
      results,
      { '2026-07-28': { 'prompts-list': 'tools only', 'server-stateless:diagnostic-tool': 'no such tool' } },
      ['server-stateless', 'tools-list'],
    )
    expect(verdict).toEqual({
      unexpected: [],
      stale: [],
      missing: [],
      known: [
        '2026-07-28 prompts-list: tools only',
        '2026-07-28 server-stateless:diagnostic-tool: no such tool',
      ],
    })
  })

  it('a failure the baseline does not name, an entry that passes, and a scenario that did not run all fail', () => {
    const verdict = judge(
      '2026-07-28',
      results,
      { '2026-07-28': { 'prompts-list': 'tools only', 'tools-list': 'was failing' }, other: { x: 'y' } },
      ['server-stateless', 'caching'],
    )
    expect(verdict.unexpected).toEqual([
      '2026-07-28 server-stateless:diagnostic-tool: diagnostic-tool failed',
    ])
    expect(verdict.stale).toEqual(['2026-07-28 tools-list: no longer fails (remove it from the baseline)'])
    expect(verdict.missing).toEqual(['2026-07-28 caching: did not run'])
  })

  it('the baseline of the repository gives a reason for every entry', () => {
    const baseline = JSON.parse(readFileSync('.ci/conformance-baseline.json', 'utf8')) as Record<
      string,
      Record<string, string>
    >
    expect(Object.keys(baseline).sort()).toEqual(['2025-11-25', '2026-07-28', 'authorization'])
    for (const entries of Object.values(baseline))
      for (const reason of Object.values(entries)) expect(reason.length).toBeGreaterThan(20)
  })
})
