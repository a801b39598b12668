import { runCli } from '../../src/cli/main.js'
import { TEST_ADMIN_TOKEN } from './app.js'

/** What one run of the CLI printed, and its exit code. */
export interface CliRun {
  code: number
  out: string
  err: string
}

/** Runs the CLI in this process with exactly this environment, collecting what it prints. */
export async function runCliWith(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  const out: string[] = []
  const err: string[] = []
  const code = await runCli(args, { out: (s) => out.push(s), err: (s) => err.push(s), env })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/**
 * The CLI against a test app's admin API (`adminUrl()`: its address, known once it listens) with the
 * test admin token and no data folder to fall back on; `env` adds to or overrides that.
 */
export const cliAgainst =
  (adminUrl: () => string) =>
  (args: string[], env: Record<string, string> = {}): Promise<CliRun> =>
    runCliWith(args, {
      LINKAUTH_ADMIN_URL: adminUrl(),
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      DATA_DIR: '/nonexistent',
      ...env,
    })
