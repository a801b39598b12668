import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * PGlite is one engine inside one process: two processes opening the same folder each keep their
 * own copy in memory and overwrite each other's files, so data is lost. A lock file beside the
 * folder (`<dir>.lock`) holds the host name, pid and start time of the process that has it open.
 *
 * A pid means something only inside one PID namespace: two containers sharing a volume each see
 * their own pid 1, and a pid from the other one is absent or another program. So a lock written
 * under another host name (in Docker, another container's id) is never taken over: its process
 * cannot be checked from here, and only a person can tell that the other container is gone.
 */
export class PGliteLockedError extends Error {
  override name = 'PGliteLockedError'
  constructor(
    readonly lockFile: string,
    readonly holderPid: number,
    /** Set when the holder runs under another host name (another machine or container). */
    readonly holderHost?: string,
  ) {
    super(`${lockFile} is held by process ${holderPid}${holderHost ? ` on ${holderHost}` : ''}`)
  }

  /** The holder, as a person finds it: `pid N`, or `pid N on host H`. */
  get holder(): string {
    return `pid ${this.holderPid}${this.holderHost ? ` on host ${this.holderHost}` : ''}`
  }

  /** For a holder on another host, what to do if it is really gone (nothing here can tell). */
  get ifGone(): string {
    return this.holderHost
      ? `; if host ${this.holderHost} (a machine or container) is really gone, delete ${this.lockFile}`
      : ''
  }
}

interface Holder {
  pid: number
  /** Start time of the process (Linux, clock ticks since boot): a reused pid has another one. */
  startTime: string | null
  /** os.hostname() of the holder; null in a lock written before it was recorded. */
  host: string | null
}

export interface PGliteLock {
  readonly file: string
  /** Removes the lock file if it is still ours; safe to call twice. */
  release(): void
}

/** How old a takeover guard must be before it counts as left behind by a crashed process. */
const STALE_GUARD_MS = 5_000

/** Takes the lock of a PGlite folder, or throws PGliteLockedError naming the live process that holds it. */
export async function lockPGliteDir(dir: string): Promise<PGliteLock> {
  const file = `${dir}.lock`
  const guard = `${file}.takeover`
  const me: Holder = { pid: process.pid, startTime: startTimeOf(process.pid), host: hostname() }
  const mine = JSON.stringify(me)
  for (let attempt = 0; attempt < 100; attempt++) {
    // 'wx' is O_CREAT|O_EXCL: of two processes starting at once, exactly one creates the file.
    if (tryCreate(file, mine)) return ownLock(file, mine)
    const seen = readLock(file)
    if (seen === undefined) continue // removed between our create and our read: try again
    const holder = parseHolder(seen)
    if (holder && holder.host !== null && holder.host !== me.host)
      throw new PGliteLockedError(file, holder.pid, holder.host)
    if (holder && isAlive(holder, me)) throw new PGliteLockedError(file, holder.pid)
    if (!holder && ageMs(file) < 1_000) {
      // Possibly created a moment ago and not yet written: let its writer finish.
      await sleep(20)
      continue
    }
    // Stale. Removing it is a read-then-unlink, so two starters doing it at once could remove each
    // other's fresh lock; a guard file makes the removal one process's at a time.
    if (!tryCreate(guard, mine)) {
      if (ageMs(guard) > STALE_GUARD_MS) removeIfExists(guard)
      await sleep(20)
      continue
    }
    try {
      if (readLock(file) === seen) removeIfExists(file)
    } finally {
      removeIfExists(guard)
    }
  }
  throw new Error(`could not take ${file}: it keeps changing`)
}

function ownLock(file: string, mine: string): PGliteLock {
  let released = false
  const release = () => {
    if (released) return
    released = true
    process.off('exit', release)
    if (readLock(file) === mine) removeIfExists(file)
  }
  // A process that exits without closing the database (a fatal error, process.exit) leaves no lock.
  process.on('exit', release)
  return { file, release }
}

function tryCreate(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: 'wx', mode: 0o600 })
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

function readLock(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>
    if (!Number.isInteger(value.pid) || (value.pid as number) <= 0) return undefined
    return {
      pid: value.pid as number,
      startTime: typeof value.startTime === 'string' ? value.startTime : null,
      host: typeof value.host === 'string' ? value.host : null,
    }
  } catch {
    return undefined // half-written by a process that died while writing: stale
  }
}

/** The holder (on this host) still runs: its pid answers and, where the OS tells, started when it did. */
function isAlive(holder: Holder, me: Holder): boolean {
  // Our own pid in a lock we did not take is a restarted container (pid 1 again, another start
  // time); the same start time is this very process opening the folder a second time.
  if (holder.pid === me.pid) return holder.startTime !== null && holder.startTime === me.startTime
  try {
    process.kill(holder.pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const now = startTimeOf(holder.pid)
  return holder.startTime === null || now === null || now === holder.startTime
}

/** Field 22 of /proc/PID/stat (after the parenthesised command name, which may hold spaces). */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs
  } catch {
    return 0
  }
}

function removeIfExists(path: string): void {
  try {
    unlinkSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
}
