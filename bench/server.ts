import { type ChildProcess, spawn } from 'node:child_process'
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

export async function startBenchServer(
  options: { port?: number; adminPort?: number; env?: Record<string, string>; database?: string } = {},
): Promise<BenchServer> {
  const adminUrlPg = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
  const dbName = options.database ?? 'linkauth_bench'
  const admin = new pg.Client({ connectionString: adminUrlPg })
  await admin.connect()
  await admin.query(`drop database if exists ${dbName} with (force)`)
  await admin.query(`create database ${dbName}`)
  await admin.end()
  const url = new URL(adminUrlPg)
  url.pathname = `/${dbName}`

  const port = options.port ?? 3400
  const adminPort = options.adminPort ?? 3401
  const child: ChildProcess = spawn(
    process.execPath,
    [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), 'dist/src/main.js'],
    {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        DATABASE_URL: url.toString(),
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        HOST: '127.0.0.1',
        ISSUER: `http://127.0.0.1:${port}`,
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
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  )
  const baseUrl = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break
    } catch {
      // not yet listening
    }
    if (i > 200 || child.exitCode !== null)
      throw new Error('bench server did not start (did you run npm run build?)')
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    baseUrl,
    databaseUrl: url.toString(),
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminToken: ADMIN_TOKEN,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
