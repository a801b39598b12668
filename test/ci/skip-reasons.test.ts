import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { noPostgresReason } from '../helpers/global-setup.js'

/** A skipped test is announced: `npm test` without PostgreSQL says once which tests it left out and why. */

function runVitest(env: Record<string, string>): string {
  const run = spawnSync(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', 'test/unit/lib.test.ts'],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    },
  )
  return `${run.stdout}${run.stderr}`
}

describe('tests skipped without PostgreSQL', () => {
  it('are announced once per run with the reason and the variable that runs them', () => {
    const output = runVitest({ LINKAUTH_TEST_ENGINE: 'pglite' })
    expect(output.split(noPostgresReason(true)).length - 1).toBe(1)
    expect(noPostgresReason(true)).toContain('TEST_DATABASE_URL=postgres://')
    expect(noPostgresReason(false)).toContain('no TEST_DATABASE_URL')
  }, 120_000)

  it('are named in the README beside that line', () => {
    const readme = readFileSync('README.md', 'utf8')
    expect(readme).toContain('PostgreSQL-only tests skipped')
  })
})
