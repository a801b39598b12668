import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './net.js'

const run = promisify(execFile)

/**
 * A PostgreSQL server of one test's own, in a temporary directory on a free port, that the test may
 * stop and start again (the shared server on 5432 serves other test files meanwhile and must never
 * be stopped). Built from Debian's binaries; fsync off, for speed.
 */
export interface PrivatePostgres {
  /** postgres:// URL of the maintenance database `postgres`. */
  readonly adminUrl: string
  /** Stops the server the hard way (like a crash or a pulled cable): connections drop at once. */
  stop(): Promise<void>
  start(): Promise<void>
  /** Stops it (if running) and deletes its files. */
  destroy(): Promise<void>
}

/** The bin directory of the newest installed PostgreSQL, or undefined when there is none. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] && join(root, versions[0], 'bin')
}

/** initdb and the server refuse to run as root: as root, they run as the postgres user. */
async function serverUser(): Promise<{ name: string; uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const { stdout } = await run('id', ['-u', 'postgres'])
  const { stdout: gid } = await run('id', ['-g', 'postgres'])
  return { name: 'postgres', uid: Number(stdout.trim()), gid: Number(gid.trim()) }
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinaries()
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql')
  const user = await serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-pg-'))
  if (user) chownSync(dir, user.uid, user.gid)
  const as = (command: string, args: string[]) =>
    user
      ? run('runuser', ['-u', user.name, '--', join(bin, command), ...args])
      : run(join(bin, command), args)
  const data = join(dir, 'data')
  const port = await freePort()
  await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    // Without fsync a commit still reaches the kernel before it is acknowledged, so it survives the
    // server being killed (not the machine): an answered write is never lost by stop().
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=50',
  ].join(' ')
  let running = false
  const server: PrivatePostgres = {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await as('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start'])
      running = true
    },
    async stop() {
      await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      running = false
    },
    async destroy() {
      if (running) await server.stop().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
  await server.start()
  return server
}

/** Runs one statement on a server's maintenance database. */
export async function adminQuery(adminUrl: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await client.query(text)
  } finally {
    await client.end()
  }
}
