/**
 * What the CLI keeps between runs, in the user's config folder: `$LINKS_CLI_CONFIG_DIR` if set (tests),
 * else `$XDG_CONFIG_HOME/linkauth-links`, else `~/.config/linkauth-links`. The folder is mode 0700 and
 * each file 0600; a file is replaced atomically (a new temp file of mode 0600, then rename), so a
 * rotated refresh token is never half-written and never readable by others, even for an instant.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The client registration: kept across logout, so that login does not register again. */
export interface ClientFile {
  /** The links API it was registered for: login's default next time. */
  api?: string
  issuer: string
  client_id: string
  /** How it was registered: dynamically (RFC 7591) or by a metadata document URL given by flag. */
  registered_by: 'dynamic' | 'metadata_document' | 'given'
  /** RFC 7592: lets this tool read or delete its own registration. */
  registration_access_token?: string
}

/** The sign-in: forgotten by logout. */
export interface SessionFile {
  api: string
  issuer: string
  resource: string
  client_id: string
  /** From the server's metadata at login, so that later commands need not read it again. */
  token_endpoint: string
  revocation_endpoint?: string
  scope: string
  access_token: string
  /** Milliseconds since the epoch. */
  access_token_expires_at: number
  refresh_token?: string
}

export const CLIENT_FILE = 'client.json'
export const SESSION_FILE = 'session.json'

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.LINKS_CLI_CONFIG_DIR) return env.LINKS_CLI_CONFIG_DIR
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return join(base, 'linkauth-links')
}

export function createStore(dir: string) {
  const path = (name: string) => join(dir, name)

  function read<T>(name: string): T | undefined {
    let text: string
    try {
      text = readFileSync(path(name), 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
    try {
      return JSON.parse(text) as T
    } catch {
      return undefined // a damaged file is as good as none
    }
  }

  function write(name: string, value: unknown): void {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700)
    const temp = path(`.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
    try {
      // flag wx: a new file, created with mode 0600 before a byte is written.
      writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
      renameSync(temp, path(name))
    } catch (err) {
      rmSync(temp, { force: true })
      throw err
    }
  }

  return {
    dir,
    path,
    readClient: () => read<ClientFile>(CLIENT_FILE),
    writeClient: (value: ClientFile) => write(CLIENT_FILE, value),
    readSession: () => read<SessionFile>(SESSION_FILE),
    writeSession: (value: SessionFile) => write(SESSION_FILE, value),
    forgetSession: () => rmSync(path(SESSION_FILE), { force: true }),
  }
}

export type Store = ReturnType<typeof createStore>
