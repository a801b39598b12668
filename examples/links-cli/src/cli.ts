/**
 * The links CLI's commands and arguments; `runLinksCli` is the whole program as a function (its
 * exit code), so tests run it in-process against real servers with their own config folder and a
 * sleep that moves the server's clock instead of waiting.
 */
import { parseArgs } from 'node:util'
import { list, shorten, stats, whoami } from './commands.js'
import { CliFailure, EXIT } from './http.js'
import { login } from './login.js'
import { logout } from './session.js'
import { configDir, createStore } from './store.js'

export interface CliIo {
  out: (line: string) => void
  err: (line: string) => void
  env: NodeJS.ProcessEnv
  sleep?: (ms: number) => Promise<void>
}

/** Where the links API is when neither --api, LINKS_API_URL nor a sign-in says. */
const DEFAULT_API = 'http://localhost:3002'

export const USAGE = `Usage: npm run links-cli -- <command> [options]

Commands:
  login [--api URL] [--client-id ID]   sign in with a code shown here and approved in a browser
  shorten URL [--slug S] [--tag T ...] make a short link
  list                                 your short links
  stats SLUG                           clicks of one of your links
  whoami                               who and where you are signed in
  logout                               revoke the sign-in and forget its tokens

Options:
  --api URL        the links API (or LINKS_API_URL; default ${DEFAULT_API}); remembered by login
  --client-id ID   a client id to use instead of registering (a metadata document URL, or one from
                   the operator)
Tokens are kept in $XDG_CONFIG_HOME/linkauth-links (or ~/.config/linkauth-links; LINKS_CLI_CONFIG_DIR overrides).
Exit codes: 0 done, 1 failed, 2 usage, 3 not signed in (run login), 4 denied, 5 code expired.`

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const OPTIONS = {
  api: { type: 'string' },
  'client-id': { type: 'string' },
  slug: { type: 'string' },
  tag: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const

/**
 * A client id the server mints is base64url, so one in 64 starts with '-', which parseArgs takes for
 * a flag ("argument is ambiguous"). `--name value` of a string option is handed on as `--name=value`.
 */
function withValuesJoined(args: string[]): string[] {
  const joined: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : ''
    const takesValue = Object.hasOwn(OPTIONS, name) && OPTIONS[name as keyof typeof OPTIONS].type === 'string'
    joined.push(takesValue && i + 1 < args.length ? `${arg}=${args[++i]}` : arg)
  }
  return joined
}

export async function runLinksCli(args: string[], io: CliIo): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: withValuesJoined(args), allowPositionals: true, options: OPTIONS })
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`)
    return EXIT.USAGE
  }
  const { values, positionals } = parsed
  const [command, ...rest] = positionals
  if (values.help || command === undefined || command === 'help') {
    io.out(USAGE)
    return values.help || command === 'help' ? EXIT.OK : EXIT.USAGE
  }
  const store = createStore(configDir(io.env))
  const expectArgs = (n: number, shape: string) => {
    if (rest.length !== n) throw new CliFailure(`Usage: ${command} ${shape}`.trim(), EXIT.USAGE)
  }
  const print = (lines: string[]) => lines.forEach((l) => io.out(l))
  try {
    switch (command) {
      case 'login': {
        expectArgs(0, '[--api URL] [--client-id ID]')
        const api =
          values.api ||
          io.env.LINKS_API_URL ||
          store.readSession()?.api ||
          store.readClient()?.api ||
          DEFAULT_API
        await login(
          store,
          { api, clientId: values['client-id'] },
          { say: io.out, sleep: io.sleep ?? realSleep },
        )
        return EXIT.OK
      }
      case 'shorten':
        expectArgs(1, 'URL [--slug S] [--tag T ...]')
        print(await shorten(store, rest[0]!, { slug: values.slug, tags: values.tag ?? [] }))
        return EXIT.OK
      case 'list':
        expectArgs(0, '')
        print(await list(store))
        return EXIT.OK
      case 'stats':
        expectArgs(1, 'SLUG')
        print(await stats(store, rest[0]!))
        return EXIT.OK
      case 'whoami':
      case 'status':
        expectArgs(0, '')
        print(whoami(store))
        return EXIT.OK
      case 'logout':
        expectArgs(0, '')
        io.out(await logout(store))
        return EXIT.OK
      default:
        io.err(`Unknown command "${command}".\n\n${USAGE}`)
        return EXIT.USAGE
    }
  } catch (err) {
    if (err instanceof CliFailure) {
      io.err(err.message)
      return err.exitCode
    }
    io.err(`links-cli: ${(err as Error).message}`)
    return EXIT.FAILED
  }
}
