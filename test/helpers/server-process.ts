import { type ChildProcess, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inject } from 'vitest'
import { makeDataDirTemplate, readPGliteSnapshot } from './pglite-snapshots.js'
import { TEST_ADMIN_TOKEN } from './app.js'

/** A script of this repository (the server, a demo) as a child process, its output collected. */
export interface ServerProcess {
  child: ChildProcess
  /** Everything it wrote so far, stdout and stderr together. */
  output: () => string
  exited: Promise<number | null>
}

const started: ChildProcess[] = []

/** Runs `node --import tsx <script> [args]` with only PATH, HOME and `env` in its environment. */
export function startScript(script: string, env: Record<string, string>, args: string[] = []): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  started.push(child)
  let output = ''
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** The real entry point (src/main.ts), for tests of start-up and stop; LOG_LEVEL=info unless given. */
export function startServer(env: Record<string, string>): ServerProcess {
  return startScript('src/main.ts', { LOG_LEVEL: 'info', ...env })
}

/**
 * A demo script (`npm run demo`, the links API's) against a server a test runs: its URLs, the test
 * admin token, its own DATA_DIR, and a time limit of `DEMO_TIMEOUT` seconds.
 */
export function startDemo(
  script: string,
  server: { issuer: string; adminUrl: string; dataDir: string },
  env: Record<string, string> = {},
): ServerProcess {
  return startScript(script, {
    LINKAUTH_URL: server.issuer,
    LINKAUTH_ADMIN_URL: server.adminUrl,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    DATA_DIR: server.dataDir,
    DEMO_TIMEOUT: '60',
    ...env,
  })
}

/** For afterAll: a failed test must not leave its server running. */
export function killStartedServers(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

/** The process has ended, by its own exit or by a signal (then exitCode stays null). */
function hasEnded(running: ServerProcess): boolean {
  return running.child.exitCode !== null || running.child.signalCode !== null
}

export async function waitForHealth(url: string, running: ServerProcess): Promise<void> {
  // Generous: the machine has two cores, often shared with other test runs, and a first start on the
  // embedded engine runs initdb in WebAssembly.
  for (const until = Date.now() + 100_000; Date.now() < until;) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    if (hasEnded(running)) throw new Error(`server exited: ${running.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`server did not become healthy: ${running.output()}`)
}

/**
 * Waits until the output matches (a log line, a demo's step) and returns the match; fails with the
 * output so far when the time is up or the process has exited without printing it.
 */
export async function waitForOutput(
  running: ServerProcess,
  pattern: RegExp,
  timeoutMs = 30_000,
): Promise<RegExpExecArray> {
  for (const until = Date.now() + timeoutMs; ;) {
    const match = pattern.exec(running.output())
    if (match) return match
    if (hasEnded(running) || Date.now() >= until) throw new Error(`no ${pattern} in: ${running.output()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * A new DATA_DIR that already holds a migrated embedded database and nothing else (no admin token, no
 * secrets), copied from the run's template. For a test whose server start is not about the very first
 * one: initdb and the migrations under WebAssembly were most of a start's time (24 s against 10 s on
 * a busy machine). The first test of the run that asks makes the template (from the migrated snapshot
 * on PGlite), in the folder the global setup named; a test in another worker process waits for it.
 * Remove the copy as a mkdtemp folder.
 */
export async function seededDataDir(prefix = 'linkauth-seeded-'): Promise<string> {
  const template = inject('dataDirTemplate')
  const [ready, failed] = [join(template, 'ready'), join(template, 'failed')]
  let maker = false
  try {
    mkdirSync(join(template, 'making'))
    maker = true
  } catch (err) {
    // EEXIST: another test makes it, or made it; anything else would only show as the wait's timeout.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  if (maker) {
    try {
      const chosen = inject('testDatabase')
      const snapshot =
        chosen.engine === 'pglite' ? readPGliteSnapshot(chosen.snapshotDir, 'migrated') : undefined
      await makeDataDirTemplate(join(template, 'data'), snapshot)
      writeFileSync(ready, '')
    } catch (err) {
      writeFileSync(failed, String((err as Error).stack ?? err))
    }
  }
  for (const until = Date.now() + 120_000; !existsSync(ready);) {
    if (existsSync(failed)) throw new Error(`no DATA_DIR template: ${readFileSync(failed, 'utf8')}`)
    if (Date.now() > until) throw new Error('the DATA_DIR template was not made within 120 s')
    await new Promise((r) => setTimeout(r, 100))
  }
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cpSync(join(template, 'data'), dir, { recursive: true })
  return dir
}
