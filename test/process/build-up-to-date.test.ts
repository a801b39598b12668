import { execFile } from 'node:child_process'
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/**
 * `npm start` runs `npm run build` first (prestart): a TypeScript build mode (`tsc -b`) that compares
 * the sources with the build info kept in dist/, so a start with nothing changed does not compile
 * again, a changed source is compiled, and a fresh clone (no dist/) builds everything.
 */
const run = promisify(execFile)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const PROJECTS = ['packages/resource/tsconfig.build.json', 'tsconfig.build.json']

/** What `tsc -b --dry` would do now in `dir`, per project: 'up to date' or 'build'. */
async function plan(dir = '.'): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    [join(process.cwd(), 'node_modules/typescript/bin/tsc'), '-b', '--dry', '--verbose', ...PROJECTS],
    { encoding: 'utf8', cwd: dir },
  )
  return PROJECTS.map((project) => {
    const line = stdout.split('\n').find((l) => l.includes(`Project '${project}' is`)) ?? ''
    if (!line) return `no line for ${project}: ${stdout}`
    return /is up to date/.test(line) ? 'up to date' : 'build'
  })
}

/** The build's inputs and outputs copied (times kept) to a folder of its own, node_modules linked. */
function copyOfCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-build-'))
  const paths = [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src',
    'migrations',
    'dist',
    'packages/resource/package.json',
    'packages/resource/tsconfig.build.json',
    'packages/resource/src',
    'packages/resource/dist',
  ]
  for (const path of paths) cpSync(path, join(dir, path), { recursive: true, preserveTimestamps: true })
  symlinkSync(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'))
  return dir
}

describe('npm start without recompiling', () => {
  it('the second build compiles nothing', async () => {
    await run(npm, ['run', 'build'], { timeout: 300_000 })
    expect(await plan()).toEqual(['up to date', 'up to date'])
    // As `npm start` runs it (tsc compiling took about 10 s, a minute on a loaded machine).
    const started = performance.now()
    await run(npm, ['run', 'build'], { timeout: 60_000 })
    const seconds = (performance.now() - started) / 1000
    console.log(`npm run build with nothing changed: ${seconds.toFixed(1)} s`)
    expect(seconds).toBeLessThan(8)
  }, 360_000)

  it('a changed source builds again; a file only touched does not; a fresh clone builds everything', async () => {
    const dir = copyOfCheckout()
    try {
      expect(await plan(dir)).toEqual(['up to date', 'up to date'])
      const main = join(dir, 'src/main.ts')
      utimesSync(main, new Date(), new Date(Date.now() + 60_000))
      // tsc -b compares the contents' hashes kept in dist/.tsbuildinfo, not only times.
      expect((await plan(dir))[1]).toBe('up to date')
      appendFileSync(main, '// changed\n')
      expect(await plan(dir)).toEqual(['up to date', 'build'])
      appendFileSync(join(dir, 'packages/resource/src/index.ts'), '// changed\n')
      expect((await plan(dir))[0]).toBe('build')
      // A fresh clone has no dist/: `npm ci` (prepare) or the first `npm start` builds both.
      rmSync(join(dir, 'dist'), { recursive: true })
      rmSync(join(dir, 'packages/resource/dist'), { recursive: true })
      expect(await plan(dir)).toEqual(['build', 'build'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
