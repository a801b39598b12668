import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import pg from 'pg'

/** Starts the production build (dist/) on a fresh PostgreSQL database, for benchmarks. */
export interface BenchServer {
  baseUrl: string
  /** The server's database (a scenario may write to it directly). */
  databaseUrl: string
  adminUrl: string
  adminToken: string
  /** The server's process id (the primary's when WORKERS is above 1). */
  pid: number
  stop(): Promise<void>
}

const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdefghijklmnop'

/** A process a benchmark started, ready. */
export interface BenchProcess {
  pid: number
  stop(): Promise<void>
}

/** Node flags from an environment variable (`--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const nodeFlags = (variable: string) => process.env[variable]?.split(' ').filter(Boolean) ?? []

/**
 * Spawns `node args…` with NODE_ENV=production and `env`, and waits until `readyUrl` answers 2xx
 * (polled every 100 ms, at most `attempts` times); throws `failure` if it exits or never does.
 */
async function startNodeProcess(
  args: string[],
  env: Record<string, string | undefined>,
  ready: { url: string; attempts: number; failure: string },
  cwd?: string,
): Promise<BenchProcess> {
  // A variable given as undefined is taken out of the inherited environment.
  const childEnv = Object.fromEntries(
    Object.entries({ ...process.env, NODE_ENV: 'production', ...env }).filter(([, v]) => v !== undefined),
  )
  const child: ChildProcess = spawn(process.execPath, args, {
    env: childEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
    ...(cwd ? { cwd } : {}),
  })
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(ready.url)).ok) break
    } catch {
      // not listening yet
    }
    if (i > ready.attempts || child.exitCode !== null) throw new Error(ready.failure)
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/**
 * An example API (`examples/<dir>/src/main.ts`, through tsx) as its own process on 127.0.0.1:`port`,
 * its public URL that address, logging at `<PREFIX>_LOG_LEVEL` (warn), with node flags from
 * `<PREFIX>_NODE_ARGS`; `env` gives the rest of its settings.
 */
export async function startExampleApi(options: {
  dir: 'links-api' | 'commerce-api'
  prefix: 'LINKS' | 'COMMERCE'
  port: number
  env: Record<string, string>
}): Promise<BenchProcess & { baseUrl: string }> {
  const { prefix, port } = options
  const baseUrl = `http://127.0.0.1:${port}`
  const started = await startNodeProcess(
    [...nodeFlags(`${prefix}_NODE_ARGS`), '--import', 'tsx', `examples/${options.dir}/src/main.ts`],
    {
      [`${prefix}_PORT`]: String(port),
      [`${prefix}_PUBLIC_URL`]: baseUrl,
      [`${prefix}_LOG_LEVEL`]: process.env[`${prefix}_LOG_LEVEL`] ?? 'warn',
      ...options.env,
    },
    { url: `${baseUrl}/readyz`, attempts: 300, failure: `examples/${options.dir} did not start` },
  )
  return { ...started, baseUrl }
}

/**
 * The checkout whose build the bench server runs: BENCH_SERVER_DIR (another worktree whose dist/ is
 * built, e.g. an older commit to compare with), else this one.
 */
export const benchServerDir = process.env.BENCH_SERVER_DIR ? resolve(process.env.BENCH_SERVER_DIR) : undefined

export async function startBenchServer(
  options: {
    port?: number
    adminPort?: number
    env?: Record<string, string | undefined>
    database?: string
    /** Serve the database as it is (e.g. the year-filled one) instead of making it afresh. */
    keepDatabase?: boolean
  } = {},
): Promise<BenchServer> {
  const adminUrlPg = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const dbName = options.database ?? 'linkauth_bench'
  if (!options.keepDatabase) {
    const admin = new pg.Client({ connectionString: adminUrlPg })
    await admin.connect()
    await admin.query(`drop database if exists ${dbName} with (force)`)
    await admin.query(`create database ${dbName}`)
    await admin.end()
  }
  const url = new URL(adminUrlPg)
  url.pathname = `/${dbName}`

  const port = options.port ?? 3400
  const adminPort = options.adminPort ?? 3401
  const baseUrl = `http://127.0.0.1:${port}`
  const main = benchServerDir ? join(benchServerDir, 'dist/src/main.js') : 'dist/src/main.js'
  if (benchServerDir && !existsSync(main))
    throw new Error(`BENCH_SERVER_DIR: no ${main} (build it there first)`)
  const started = await startNodeProcess(
    [...nodeFlags('BENCH_NODE_ARGS'), main],
    {
      DATABASE_URL: url.toString(),
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      ISSUER: baseUrl,
      ADMIN_TOKEN,
      COOKIE_SECRET: 'bench-cookie-secret-0123456789abcdefghijklmnop',
      KEY_ENCRYPTION_KEY: '1'.repeat(64),
      LOG_LEVEL: 'warn',
      // Codes are minted ahead of the code-exchange scenario; give them time to wait their turn.
      AUTH_CODE_TTL: '600',
      // A benchmark is many requests from one address and one client: it measures the server, not its
      // limits. BENCH_RATE_LIMITS=1 keeps them on, to measure what they cost (raise the limits too).
      RATE_LIMITS: process.env.BENCH_RATE_LIMITS === '1' ? 'true' : 'false',
      ...options.env,
    },
    {
      url: `${baseUrl}/readyz`,
      attempts: 200,
      failure: 'bench server did not start (did you run npm run build?)',
    },
    benchServerDir,
  )
  return {
    baseUrl,
    databaseUrl: url.toString(),
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminToken: ADMIN_TOKEN,
    ...started,
  }
}
