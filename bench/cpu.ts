import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import pg from 'pg'

/**
 * CPU time (user + system, in seconds) of the processes a scenario shares the machine with, read
 * from /proc (Linux): the server (its process and its cluster workers), the PostgreSQL backends
 * serving the bench's database (each backend's process title names its database: `postgres: user
 * dbname addr …`; other databases' backends and the cluster's background processes are left out),
 * and this process (the load generator). Kept per process id, so a backend that starts during a
 * scenario counts from zero. Divided by the requests served it tells where a request's CPU goes, which
 * is what bounds a two-core machine. Empty figures where /proc is not there.
 */
export interface CpuSample {
  server: number
  /** Seconds of each backend of the database, by process id. */
  backends: Map<string, number>
  loadGenerator: number
}

const TICKS_PER_SECOND = 100

function statOf(pid: string): { comm: string; ppid: string; seconds: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = stat.lastIndexOf(')')
    const comm = stat.slice(stat.indexOf('(') + 1, close)
    const fields = stat.slice(close + 2).split(' ')
    // After the command: state ppid … utime (field 14 of the line, 11 here) stime (12).
    return { comm, ppid: fields[1]!, seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND }
  } catch {
    return undefined
  }
}

/**
 * The database a PostgreSQL backend serves, from its process title: `postgres: user dbname addr …`,
 * or `postgres: 15/main: user dbname addr …` when the cluster has a cluster_name (Debian's).
 */
function backendDatabase(pid: string): string | undefined {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
    return /^postgres: (?:\S+: )?\S+ (\S+) \S/.exec(title)?.[1]
  } catch {
    return undefined
  }
}

/** Which PostgreSQL backends are the bench database's: its name, and its cluster's postmaster. */
export interface BenchDatabase {
  name: string
  /** The postmaster's process id: another cluster on the machine may have a database of that name. */
  postmaster: string
  /**
   * Backends of the database left out (by process id), e.g. those of another server instance that
   * runs housekeeping beside the measured one; whoever sets it keeps it current.
   */
  excluded?: Set<string>
}

const processIds = (): string[] => {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
}

/** The server's process and its cluster workers (its children). */
function serverProcesses(serverPid: number): string[] {
  const server = String(serverPid)
  return processIds().filter((pid) => pid === server || statOf(pid)?.ppid === server)
}

export function sampleCpu(serverPid: number, database?: BenchDatabase): CpuSample {
  const sample: CpuSample = { server: 0, backends: new Map(), loadGenerator: 0 }
  const server = String(serverPid)
  for (const pid of processIds()) {
    const stat = statOf(pid)
    if (!stat) continue
    if (pid === server || stat.ppid === server) sample.server += stat.seconds
    else if (
      database &&
      stat.comm === 'postgres' &&
      stat.ppid === database.postmaster &&
      backendDatabase(pid) === database.name &&
      !database.excluded?.has(pid)
    )
      sample.backends.set(pid, stat.seconds)
  }
  const own = process.cpuUsage()
  sample.loadGenerator = (own.user + own.system) / 1e6
  return sample
}

/** Microseconds of CPU per request of each party between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number) {
  const us = (seconds: number) => (requests > 0 ? Math.round((seconds * 1e6) / requests) : 0)
  // A backend's time since the first sample (all of it for one that started after); one that ended
  // during the scenario is not in the second sample, and its last share is lost (pools keep theirs).
  let postgres = 0
  for (const [pid, seconds] of after.backends) postgres += seconds - (before.backends.get(pid) ?? 0)
  const server = us(after.server - before.server)
  const pg = us(postgres)
  return {
    server,
    postgres: pg,
    serverAndPostgres: server + pg,
    loadGenerator: us(after.loadGenerator - before.loadGenerator),
  }
}

/**
 * The server's peak resident memory in MiB: the sum of VmHWM of its process and its cluster workers
 * (/proc/PID/status). resetPeakRss() starts a new peak (writing 5 to /proc/PID/clear_refs), so the
 * figure after a scenario is that scenario's peak; undefined where /proc is not there.
 */
export function peakRssMiB(serverPid: number): number | undefined {
  let kB = 0
  let found = false
  for (const pid of serverProcesses(serverPid)) {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      if (hwm) {
        kB += Number(hwm[1])
        found = true
      }
    } catch {
      // the process ended
    }
  }
  return found ? Math.round(kB / 1024) : undefined
}

export function resetPeakRss(serverPid: number): void {
  for (const pid of serverProcesses(serverPid)) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5')
    } catch {
      // not allowed or gone: the peak then counts from the process's start
    }
  }
}

/** The bench database's name and postmaster (the parent of a backend of it), read once per URL. */
const databases = new Map<string, Promise<BenchDatabase | undefined>>()
export function benchDatabase(databaseUrl: string): Promise<BenchDatabase | undefined> {
  let found = databases.get(databaseUrl)
  if (!found) {
    found = (async () => {
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      try {
        const { rows } = await client.query<{ pid: number; name: string }>(
          'select pg_backend_pid() as pid, current_database() as name',
        )
        const backend = statOf(String(rows[0]!.pid))
        return backend && { name: rows[0]!.name, postmaster: backend.ppid }
      } finally {
        await client.end()
      }
    })()
    databases.set(databaseUrl, found)
  }
  return found
}

/**
 * PostgreSQL's WAL position in bytes (the whole cluster's, so other databases' writes count too):
 * the difference over a scenario, per request, is what one request makes PostgreSQL write and flush.
 */
export async function walBytes(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ bytes: string }>("select pg_current_wal_lsn() - '0/0' as bytes")
    return Number(rows[0]!.bytes)
  } finally {
    await client.end()
  }
}
