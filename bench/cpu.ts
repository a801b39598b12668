import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

/**
 * CPU time (user + system, in seconds) of the processes a scenario shares the machine with, read
 * from /proc (Linux): the server (its process and its cluster workers), every PostgreSQL process, and
 * this process (the load generator). Divided by the requests served it tells where a request's CPU
 * goes, which is what bounds a two-core machine. Empty figures where /proc is not there.
 */
export interface CpuSample {
  server: number
  postgres: number
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

export function sampleCpu(serverPid: number): CpuSample {
  const sample = { server: 0, postgres: 0, loadGenerator: 0 }
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return sample
  }
  const server = String(serverPid)
  for (const pid of pids) {
    const stat = statOf(pid)
    if (!stat) continue
    if (pid === server || stat.ppid === server) sample.server += stat.seconds
    else if (stat.comm === 'postgres') sample.postgres += stat.seconds
  }
  const own = process.cpuUsage()
  sample.loadGenerator = (own.user + own.system) / 1e6
  return sample
}

/** Microseconds of CPU per request of each party between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number) {
  const us = (a: number, b: number) => (requests > 0 ? Math.round(((b - a) * 1e6) / requests) : 0)
  return {
    server: us(before.server, after.server),
    postgres: us(before.postgres, after.postgres),
    loadGenerator: us(before.loadGenerator, after.loadGenerator),
  }
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
