import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { adminTokenPath } from './runtime-secrets.js'
import type { Config } from './config.js'
import type { Logger } from 'pino'

/** The redirect URI the hint and the README's quick start register (RFC 8252 §7.3: a loopback IP literal). */
export const EXAMPLE_REDIRECT_URI = 'http://127.0.0.1:8080/callback'

/**
 * Where the next steps can be run: a checkout with its dev dependencies has the demo and
 * `npm run cli`; the Docker image (Docker writes /.dockerenv) and an installed package have only
 * the `linkauth` command, run inside the container with `docker exec`.
 */
export type RunningFrom = 'checkout' | 'container' | 'installed'

export function runningFrom(packageRoot: string): RunningFrom {
  const checkout =
    existsSync(join(packageRoot, 'scripts', 'demo.ts')) &&
    existsSync(join(packageRoot, 'node_modules', '.bin', 'tsx'))
  if (checkout) return 'checkout'
  return existsSync('/.dockerenv') ? 'container' : 'installed'
}

const CLI: Record<RunningFrom, string> = {
  checkout: 'npm run cli --',
  container: 'docker exec <container> linkauth',
  installed: 'linkauth',
}

const MORE: Record<RunningFrom, string> = {
  checkout: ' README.md, "Quick start", says more.',
  container: ' The README\'s "Running in Docker" says more.',
  installed: '',
}

/** Where `npm run demo` looks for linkauth unless LINKAUTH_URL says otherwise (scripts/demo.ts). */
export const DEMO_DEFAULT_URL = 'http://localhost:3000'

/** The demo's command: it needs LINKAUTH_URL when the server is not where the demo looks by default. */
const demoCommand = (issuer: string | undefined) =>
  issuer === undefined || issuer === DEMO_DEFAULT_URL ? 'npm run demo' : `LINKAUTH_URL=${issuer} npm run demo`

/** What the hint reads of the configuration: where the admin token is, and the server's public URL. */
type HintConfig = Pick<Config, 'adminToken' | 'dataDir'> & Partial<Pick<Config, 'issuer'>>

/** The first line of the hint, and the message of its log record. */
export const FIRST_RUN_MESSAGE = 'No application is registered yet. Next steps:'

interface Step {
  /** The step's field in the log record. */
  field: string
  what: string
  command: string
}

function firstRunSteps(config: HintConfig, from: RunningFrom) {
  const cli = CLI[from]
  const steps: Step[] = [
    ...(from === 'checkout'
      ? [
          {
            field: 'demo',
            what: 'watch the whole flow:',
            command: `${demoCommand(config.issuer)}   (in another terminal)`,
          },
        ]
      : []),
    {
      field: 'register_application',
      what: 'register an application:',
      command: `${cli} clients create --name "My App" --redirect-uri ${EXAMPLE_REDIRECT_URI}`,
    },
    {
      field: 'create_user',
      what: 'and a user:',
      command: `${cli} users create --email you@example.com --password '<password>'`,
    },
  ]
  const token = config.adminToken ? 'ADMIN_TOKEN' : `${adminTokenPath(config.dataDir)} (or ADMIN_TOKEN)`
  return { steps, token }
}

/**
 * What a newcomer does next, logged while no application is registered: watch the whole flow with
 * the demo, or register an application and a user with the CLI (which finds the admin token itself).
 * One command per line, so it reads in a terminal and can be copied.
 */
export function firstRunHint(config: HintConfig, from: RunningFrom): string {
  const { steps, token } = firstRunSteps(config, from)
  return [
    FIRST_RUN_MESSAGE,
    ...steps.map(({ what, command }) => `  ${what.padEnd(26)}${command}`),
    `  The CLI reads the admin token from ${token}.${MORE[from]}`,
  ].join('\n')
}

/**
 * The same steps as one log record with a field for each (`register_application`, `create_user`,
 * `admin_token`, …), for logs that are JSON lines (`docker logs`, a collector): a message full of
 * `\n` escapes reads as one long line there.
 */
export function firstRunRecord(config: HintConfig, from: RunningFrom): Record<string, string> {
  const { steps, token } = firstRunSteps(config, from)
  const more = MORE[from].trim()
  return {
    ...Object.fromEntries(steps.map(({ field, command }) => [field, command.replace(/\s+\(.*\)$/, '')])),
    admin_token: token,
    ...(more ? { more } : {}),
  }
}

/** Logs the hint: as lines when the log is a terminal's, else as one record with a field per step. */
export function logFirstRunHint(
  logger: Pick<Logger, 'info'>,
  config: HintConfig,
  from: RunningFrom,
  terminal: boolean,
): void {
  if (terminal) logger.info(firstRunHint(config, from))
  else logger.info(firstRunRecord(config, from), FIRST_RUN_MESSAGE)
}
