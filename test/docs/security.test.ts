import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/**
 * SECURITY.md maps each threat to the tests that prove its counter (issue 8). A renamed or deleted
 * test would silently leave a threat unproved; this keeps every reference pointing at a real test.
 */
const text = readFileSync('SECURITY.md', 'utf8')
const rows = text.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| threat'))
const threatRows = rows.filter((line) => !/^\|\s*-+/.test(line))
const reference = /`((?:examples\/[\w-]+\/|packages\/[\w-]+\/)?test\/[^`]+\.test\.ts)` › “([^”]+)”/g

function referencesOf(line: string) {
  return [...line.matchAll(reference)].map((m) => ({ file: m[1] as string, name: m[2] as string }))
}

describe('SECURITY.md', () => {
  it('has the threats the issue names, each with at least one proving test', () => {
    for (const threat of [
      'Open redirect',
      'code interception and injection',
      'code replay',
      'PKCE downgrade',
      'request forgery',
      'Clickjacking',
      'Refresh token theft',
      'Mix-up',
      'Token leakage',
      'Password guessing',
      'enumeration',
      'Denial of service',
    ])
      expect(
        threatRows.some((row) => row.includes(threat)),
        threat,
      ).toBe(true)
    for (const row of threatRows) expect(referencesOf(row).length, row.slice(0, 60)).toBeGreaterThan(0)
  })

  it('names only test files that exist and test names that are in them', () => {
    const all = referencesOf(text)
    expect(all.length).toBeGreaterThan(40)
    for (const { file, name } of all) {
      expect(existsSync(file), file).toBe(true)
      expect(readFileSync(file, 'utf8').includes(name), `${file} › ${name}`).toBe(true)
    }
  })

  it('the checker itself finds a reference to a test that does not exist', () => {
    const bogus = referencesOf('`test/accounts/sign-in.test.ts` › “a test nobody wrote”')[0]
    expect(bogus).toBeDefined()
    expect(readFileSync(bogus!.file, 'utf8').includes(bogus!.name)).toBe(false)
  })
})
