import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'

/**
 * Several processes starting at once on a fresh DATA_DIR all generate the secrets they find
 * missing. Each must end up with the same values, none may crash on the file another one created,
 * and none may read a file another one is still writing.
 */

const root = mkdtempSync(join(tmpdir(), 'linkauth-secrets-'))
const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) child.kill()
  rmSync(root, { recursive: true, force: true })
})

// Each child answers one line per request `{dir, at}`: at time `at` (all of them at once, spinning
// to the millisecond) it resolves the secrets of `dir` and prints them, or the error it met.
const CHILD = `
import { createInterface } from 'node:readline'
import { loadConfig } from './src/config.ts'
import { resolveSecrets } from './src/runtime-secrets.ts'
process.stdout.write('ready\\n')
for await (const line of createInterface({ input: process.stdin })) {
  const { dir, at } = JSON.parse(line)
  while (Date.now() < at) {}
  try {
    process.stdout.write(JSON.stringify(resolveSecrets(loadConfig({ DATA_DIR: dir }))) + '\\n')
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }) + '\\n')
  }
}
`

function startChild() {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  children.push(child)
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async () => (await lines.next()).value as string
  return { child, next }
}

describe('secrets generated in DATA_DIR', () => {
  it('processes starting at once on a fresh DATA_DIR all read the same complete secrets', async () => {
    const racers = [startChild(), startChild(), startChild()]
    for (const racer of racers) expect(await racer.next()).toBe('ready')
    const started = Date.now()
    // Bounded in rounds and in time; without the atomic write a few rounds are enough to fail.
    for (let round = 0; round < 40 && Date.now() - started < 20_000; round++) {
      const dir = join(root, `round-${round}`)
      const at = Date.now() + 30
      for (const racer of racers) racer.child.stdin!.write(`${JSON.stringify({ dir, at })}\n`)
      const answers = await Promise.all(racers.map((r) => r.next()))
      const results = answers.map((a) => JSON.parse(a) as Record<string, string>)
      for (const result of results) {
        expect(result.error).toBeUndefined()
        expect(result.adminToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
      }
      expect(results[1]).toEqual(results[0])
      expect(results[2]).toEqual(results[0])
      // What is on disk is what they use, mode 0600, and nothing of the writing is left behind.
      expect(readFileSync(join(dir, 'admin-token'), 'utf8')).toBe(`${results[0]!.adminToken}\n`)
      expect(statSync(join(dir, 'admin-token')).mode & 0o777).toBe(0o600)
      expect(readdirSync(dir).sort()).toEqual(['admin-token', 'cookie-secret', 'key-encryption-key'])
    }
  }, 60_000)
})
