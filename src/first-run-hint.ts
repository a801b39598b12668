import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { adminTokenPath } from './runtime-secrets.js'
import type { Config } from './config.js'

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

/**
 * What a newcomer does next, logged while no application is registered: watch the whole flow with
 * the demo, or register an application and a user with the CLI (which finds the admin token itself).
 * One command per line, so it reads in a terminal and can be copied.
 */
export function firstRunHint(config: Pick<Config, 'adminToken' | 'dataDir'>, from: RunningFrom): string {
  const cli = CLI[from]
  const token = config.adminToken ? 'ADMIN_TOKEN' : `${adminTokenPath(config.dataDir)} (or ADMIN_TOKEN)`
  const steps: [string, string][] = [
    ...(from === 'checkout'
      ? [['watch the whole flow:', 'npm run demo   (in another terminal)'] as [string, string]]
      : []),
    [
      'register an application:',
      `${cli} clients create --name "My App" --redirect-uri ${EXAMPLE_REDIRECT_URI}`,
    ],
    ['and a user:', `${cli} users create --email you@example.com --password '<password>'`],
  ]
  return [
    'No application is registered yet. Next steps:',
    ...steps.map(([what, command]) => `  ${what.padEnd(26)}${command}`),
    `  The CLI reads the admin token from ${token}.${MORE[from]}`,
  ].join('\n')
}
