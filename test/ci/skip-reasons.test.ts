import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { noPostgresReason, POSTGRES_ONLY_FILES } from '../helpers/global-setup.js'

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
    for (const file of POSTGRES_ONLY_FILES) expect(readme).toContain(file)
  })

  it('the line names every file whose tests skip on PGlite, and no other', () => {
    // The forms a test uses to skip off PostgreSQL: on the engine, or on the database having no URL.
    const skipsOffPostgres =
      /skipIf\(testEngine\(\) !== 'postgres'\)|skipIf\(!onPostgres\)|engine === 'pglite'\) ctx\.skip\(\)|!database\.url\) ctx\.skip\(\)/
    const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${f}`)
      .filter((f) => skipsOffPostgres.test(readFileSync(f, 'utf8')))
      .sort()
    expect(files).toEqual([...POSTGRES_ONLY_FILES])
    for (const file of files) expect(noPostgresReason(false)).toContain(file)
  })
})
