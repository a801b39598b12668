import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import {
  adminToken,
  adminUrl,
  CliError,
  createAdminClient,
  EXIT_OK,
  EXIT_REFUSED,
  EXIT_USAGE,
} from './admin-client.js'
import type { Command } from './command.js'
import { COMMANDS } from './commands.js'

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig['options']>

const GLOBAL_HELP = `linkauth: operate a linkauth server through its admin API

Usage: linkauth <command> [options] [--json]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(24)} ${c.summary}`).join('\n')}

Environment:
  LINKAUTH_ADMIN_URL  admin API address (default http://ADMIN_HOST:ADMIN_PORT, as the server reads
                      them: 127.0.0.1 and 3001 unless set; a wildcard host is asked on 127.0.0.1)
  ADMIN_TOKEN         admin bearer token (default: read from DATA_DIR/admin-token, DATA_DIR=./.data)

Run 'linkauth <command> --help' for a command's options.
Exit codes: 0 ok, 1 the server refused or could not be reached, 2 wrong usage.`

function commandHelp(command: Command): string {
  const options = Object.entries(command.options).map(
    ([name, o]) =>
      `  --${name}${o.type === 'string' ? ' VALUE' : ''}${o.multiple ? ' (repeatable)' : ''}  ${o.description}`,
  )
  return [
    `Usage: linkauth ${command.usage} [--json]`,
    '',
    command.summary,
    '',
    'Options:',
    ...options,
    '  --json  print the answer as JSON',
  ].join('\n')
}

/**
 * Identifiers the server mints are base64url, so one can start with '-' and would be read as a
 * flag. Arguments are reordered for parseArgs: known options first (a string option's value joined
 * as `--name=value`, so a value may start with '-' too), then '--', then the positionals. An
 * argument that is not a known option fills a free positional slot; after '--' every one does.
 */
function withPositionalsLast(
  args: string[],
  options: ParseArgsOptionsConfig,
  positionalCount: number,
): string[] {
  const flags: string[] = []
  const positionals: string[] = []
  const known = (arg: string) => {
    const name = arg === '-h' ? 'help' : arg.startsWith('--') ? arg.slice(2).split('=')[0]! : ''
    return Object.hasOwn(options, name) ? options[name] : undefined
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--') {
      positionals.push(...args.slice(i + 1))
      break
    }
    const option = known(arg)
    if (option?.type === 'string' && !arg.includes('=') && i + 1 < args.length) {
      flags.push(`${arg}=${args[++i]}`)
    } else if (option || (arg.startsWith('-') && positionals.length >= positionalCount)) {
      flags.push(arg) // parseArgs refuses an unknown option with its own message
    } else {
      positionals.push(arg)
    }
  }
  return [...flags, '--', ...positionals]
}

export interface CliIo {
  out: (text: string) => void
  err: (text: string) => void
  env: NodeJS.ProcessEnv
}

/** Runs one CLI invocation; returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-'))
  const command = COMMANDS.find((c) => {
    const parts = c.name.split(' ')
    return parts.every((p, i) => words[i] === p)
  })
  if (!command) {
    const wantsHelp =
      argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help'
    ;(wantsHelp ? io.out : io.err)(
      wantsHelp ? GLOBAL_HELP : `unknown command: ${argv.join(' ')}\n\n${GLOBAL_HELP}`,
    )
    return wantsHelp ? EXIT_OK : EXIT_USAGE
  }
  const rest = argv.slice(argv.indexOf(command.name.split(' ').at(-1)!) + 1)
  const options = {
    ...Object.fromEntries(
      Object.entries(command.options).map(([k, o]) => [k, { type: o.type, multiple: o.multiple ?? false }]),
    ),
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } satisfies ParseArgsOptionsConfig
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({
      args: withPositionalsLast(rest, options, (command.positionals ?? []).length),
      options,
      allowPositionals: true,
      strict: true,
    })
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${commandHelp(command)}`)
    return EXIT_USAGE
  }
  const { values, positionals } = parsed
  if (values.help) {
    io.out(commandHelp(command))
    return EXIT_OK
  }
  const missing = Object.entries(command.options)
    .filter(([k, o]) => o.required && values[k] === undefined)
    .map(([k]) => `--${k}`)
  const expected = command.positionals ?? []
  if (missing.length > 0 || positionals.length !== expected.length) {
    const why =
      missing.length > 0
        ? `missing ${missing.join(', ')}`
        : `expected ${expected.join(' ') || 'no arguments'}`
    io.err(`${why}\n\n${commandHelp(command)}`)
    return EXIT_USAGE
  }
  const request = createAdminClient({
    baseUrl: adminUrl(io.env),
    token: adminToken(io.env),
  })
  try {
    const result = await command.run(
      request,
      values as Record<string, string | string[] | boolean>,
      positionals,
    )
    io.out(values.json ? JSON.stringify(result, null, 2) : command.show(result))
    return EXIT_OK
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`linkauth: ${err.message}`)
      return err.exitCode
    }
    io.err(`linkauth: ${(err as Error).message}`)
    return EXIT_REFUSED
  }
}

// `npm run cli` runs this file directly; bin/linkauth.js imports runCli instead.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const code = await runCli(process.argv.slice(2), {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
  })
  process.exitCode = code
}
