import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './net.js'

/**
 * A private PgBouncer (Debian's package) in front of the test PostgreSQL: its own configuration in
 * a temporary folder, a free port on 127.0.0.1, transaction pooling. Tests of it are skipped with
 * one line saying why when pgbouncer is not installed, unless REQUIRE_PGBOUNCER=1 (CI).
 */
export const PGBOUNCER_REQUIRED = process.env.REQUIRE_PGBOUNCER === '1'

/** The pgbouncer executable (Debian puts it in /usr/sbin), or undefined. */
export function pgbouncerPath(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin']) {
    if (dir && existsSync(join(dir, 'pgbouncer'))) return join(dir, 'pgbouncer')
  }
  if (PGBOUNCER_REQUIRED) throw new Error('REQUIRE_PGBOUNCER=1 but pgbouncer is not installed')
  console.log(
    "PgBouncer tests skipped: no pgbouncer executable; install it with 'apt-get install -y pgbouncer' (REQUIRE_PGBOUNCER=1 turns this skip into a failure)",
  )
  return undefined
}

/** [major, minor] of the installed pgbouncer. */
export function pgbouncerVersion(path: string): [number, number] {
  const match = /PgBouncer (\d+)\.(\d+)/.exec(execFileSync(path, ['--version'], { encoding: 'utf8' }))
  if (!match) throw new Error('pgbouncer --version: no version')
  return [Number(match[1]), Number(match[2])]
}

/** Named prepared statements in transaction mode arrived in PgBouncer 1.21 (max_prepared_statements). */
export function tracksPreparedStatements([major, minor]: [number, number]): boolean {
  return major > 1 || (major === 1 && minor >= 21)
}

export interface PgBouncer {
  port: number
  /** The server URL with its host and port replaced by this PgBouncer's (and the database as given). */
  url(serverUrl: string, database?: string): string
  /** SHOW <what> on the admin console, as rows. */
  show(what: 'POOLS' | 'STATS' | 'SERVERS'): Promise<Record<string, unknown>[]>
  output(): string
  stop(): Promise<void>
}

export interface PgBouncerOptions {
  /** The PostgreSQL server it forwards to. */
  serverUrl: string
  /** Server connections per (database, user): fewer than the clients' so that they share them. */
  poolSize: number
  /** Extra [databases] lines, e.g. a session-mode alias for the LISTEN connection. */
  databases?: string[]
}

export async function startPgBouncer(path: string, options: PgBouncerOptions): Promise<PgBouncer> {
  const server = new URL(options.serverUrl)
  const user = decodeURIComponent(server.username) || 'postgres'
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'linkauth-pgbouncer-'))
  const version = pgbouncerVersion(path)
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`)
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      ...(options.databases ?? []),
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // The local PostgreSQL trusts 127.0.0.1; PgBouncer only checks that the user is listed.
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize}`,
      'max_client_conn = 200',
      // node-postgres sends statement_timeout as a startup parameter, which PgBouncer refuses
      // unless told to ignore it (docs/operating.md: set it on the database instead).
      'ignore_startup_parameters = extra_float_digits,statement_timeout',
      ...(tracksPreparedStatements(version) ? ['max_prepared_statements = 200'] : []),
      '',
    ].join('\n'),
  )
  // PgBouncer refuses to run as root: as root, it switches to the postgres user (-u), who must read its files.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    for (const file of ['', 'users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, -1)
  }
  const child: ChildProcess = spawn(
    path,
    [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let output = ''
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  for (let i = 0; !output.includes('process up'); i++) {
    if (child.exitCode !== null || i > 200) throw new Error(`pgbouncer did not start: ${output}`)
    await new Promise((r) => setTimeout(r, 25))
  }
  const url = (serverUrl: string, database?: string) => {
    const u = new URL(serverUrl)
    u.hostname = '127.0.0.1'
    u.port = String(port)
    if (database) u.pathname = `/${database}`
    return u.toString()
  }
  return {
    port,
    url,
    async show(what) {
      const client = new pg.Client({ connectionString: url(options.serverUrl, 'pgbouncer') })
      await client.connect()
      try {
        return (await client.query(`SHOW ${what}`)).rows as Record<string, unknown>[]
      } finally {
        await client.end()
      }
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGINT')
        await exited
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
