import { type ChildProcess, spawn } from 'node:child_process'

/** The real entry point (src/main.ts) as a child process, for tests of start-up and stop. */
export interface ServerProcess {
  child: ChildProcess
  /** Everything it wrote so far, stdout and stderr together. */
  output: () => string
  exited: Promise<number | null>
}

const started: ChildProcess[] = []

/** Starts src/main.ts with only PATH, HOME, LOG_LEVEL=info and `env` in its environment. */
export function startServer(env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  started.push(child)
  let output = ''
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** For afterAll: a failed test must not leave its server running. */
export function killStartedServers(): void {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

export async function waitForHealth(url: string, running: ServerProcess): Promise<void> {
  // Generous: the machine has two cores, often shared with other test runs.
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not listening yet
    }
    if (running.child.exitCode !== null) throw new Error(`server exited: ${running.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`server did not become healthy: ${running.output()}`)
}

/** Waits until the output matches (a log line), or fails with the output so far. */
export async function waitForOutput(running: ServerProcess, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 600 && !pattern.test(running.output()); i++) await new Promise((r) => setTimeout(r, 50))
  if (!pattern.test(running.output())) throw new Error(`no ${pattern} in: ${running.output()}`)
}
