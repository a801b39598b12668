import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import { PGliteDialect } from 'kysely-pglite-dialect'
import pg from 'pg'
import type { Database } from './database.js'
import { type Listen, listenOnPostgres } from './notifications.js'
import { lockPGliteDir, type PGliteLock } from './pglite-lock.js'

export type DatabaseEngine = 'postgres' | 'pglite'

export interface DatabaseHandle {
  readonly db: Kysely<Database>
  readonly engine: DatabaseEngine
  /** The pool's figures (PostgreSQL only), for metrics. */
  readonly poolStats?: () => { total: number; idle: number; waiting: number }
  /** LISTEN on a channel: a connection of its own on PostgreSQL, the one engine in-process on PGlite. */
  readonly listen: Listen
  /** Closes the pool or PGlite; safe to call twice. */
  close(): Promise<void>
}

export interface ConnectOptions {
  /** postgres:// URL; without it the embedded PGlite engine is used. */
  databaseUrl?: string | undefined
  /** Where PGlite keeps its files; `memory://` (or undefined) keeps it in memory. */
  dataDir?: string | undefined
  /**
   * In-memory PGlite only: the data directory to start from, as PGlite's `dumpDataDir()` wrote it (a
   * tar), instead of a new cluster. Starting from one skips initdb, most of PGlite's start-up.
   */
  pgliteSnapshot?: Blob | undefined
  poolSize?: number
  /** The LISTEN connection's URL (PostgreSQL only): direct or a session-mode pool; databaseUrl by default. */
  listenUrl?: string | undefined
  /**
   * Named prepared statements (default true). Off behind a transaction-pooling proxy that does not
   * track them (PgBouncer before 1.21): each statement is then parsed and planned on every run.
   */
  preparedStatements?: boolean
}

/** Opens Kysely on PostgreSQL (a pg Pool) or on embedded PGlite, behind one interface. */
export async function connectDatabase(options: ConnectOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl)
    return connectPostgres(options.databaseUrl, options.poolSize ?? 10, {
      listenUrl: options.listenUrl ?? options.databaseUrl,
      preparedStatements: options.preparedStatements ?? true,
    })
  return connectPGlite(options.dataDir, options.pgliteSnapshot)
}

function connectPostgres(
  url: string,
  poolSize: number,
  options: { listenUrl: string; preparedStatements: boolean },
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A statement that hangs (a lock, a dying server) must not hold a request forever.
    statement_timeout: 10_000,
    query_timeout: 15_000,
  })
  // A connection dying while idle must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: options.preparedStatements ? preparingPool(pool) : checkedOutErrorsIgnored(pool),
    }),
  })
  return {
    db,
    engine: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: listenOnPostgres(options.listenUrl),
    close: once(() => db.destroy()),
  }
}

async function connectPGlite(
  dataDir: string | undefined,
  snapshot: Blob | undefined,
): Promise<DatabaseHandle> {
  let client: PGlite
  let lock: PGliteLock | undefined
  if (dataDir && dataDir !== 'memory://') {
    mkdirSync(dataDir, { recursive: true })
    lock = await lockPGliteDir(dataDir)
    try {
      client = await PGlite.create(dataDir)
    } catch (err) {
      lock.release()
      throw err
    }
  } else {
    client = await PGlite.create(snapshot ? { loadDataDir: snapshot } : {})
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(client) })
  // One process, one engine: a commit's NOTIFY reaches the listener in the same process.
  const listen: Listen = async (channel, handlers) => {
    const unlisten = await client.listen(channel, () => handlers.notify())
    handlers.listening()
    return once(() => (client.closed ? Promise.resolve() : unlisten()))
  }
  const close = async () => {
    await db.destroy()
    lock?.release()
  }
  return { db, engine: 'pglite', listen, close: once(close) }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => {
    done ??= fn()
    return done
  }
}

function ignoreCheckedOutError(): void {}

/** Kysely's selectAll() and returningAll(): `select *`, `select "table".*`, `returning *`. */
const EVERY_COLUMN = /\bselect \*|"\.\*|\breturning \*/i

/** The pool as Kysely would use it, with the checked-out error guard of preparingPool and unnamed statements. */
function checkedOutErrorsIgnored(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect()
      client.on('error', ignoreCheckedOutError)
      return {
        query: client.query.bind(client) as unknown as PostgresPoolClient['query'],
        release: () => {
          client.off('error', ignoreCheckedOutError)
          client.release()
        },
      }
    },
    end: () => pool.end(),
  }
}

/**
 * Every statement Kysely sends becomes a named prepared statement of its connection (the name is a
 * hash of its text): PostgreSQL parses and plans it once per connection and then only binds and runs
 * it. Our statements are few and fixed in shape, and for the hot ones planning cost more than running.
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>()
  /** The statement's name, or '' for one sent unnamed. */
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) {
      // A statement that selects or returns every column is not named: once a migration adds a
      // column, PostgreSQL refuses to run a prepared one again ("cached plan must not change result
      // type"), which would fail the running version's statements during an upgrade.
      name = EVERY_COLUMN.test(text) ? '' : `k${createHash('sha1').update(text).digest('base64url')}`
      if (names.size < 10_000) names.set(text, name)
    }
    return name
  }
  const nameField = (name: string) => (name === '' ? {} : { name })
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect()
      // The pool listens for errors only on idle clients. A connection that dies while checked out
      // between two statements (inside a transaction: the server stopped, or pg_terminate_backend)
      // emits 'error' with no listener, which would crash the process. The next statement on it
      // fails instead (answered 503), and release() drops the broken client from the pool.
      client.on('error', ignoreCheckedOutError)
      const query = (text: unknown, values?: readonly unknown[]) =>
        typeof text === 'string'
          ? client.query({ ...nameField(nameOf(text)), text, values: values as unknown[] })
          : client.query(text as never)
      return {
        query: query as unknown as PostgresPoolClient['query'],
        release: () => {
          client.off('error', ignoreCheckedOutError)
          client.release()
        },
      }
    },
    end: () => pool.end(),
  }
}
