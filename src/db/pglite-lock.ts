import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * PGlite is one engine inside one process: two processes opening the same folder each keep their
 * own copy in memory and overwrite each other's files, so data is lost. A lock file beside the
 * folder (`<dir>.lock`) holds the pid and start time of the process that has it open.
 */
export class PGliteLockedError extends Error {
  override name = 'PGliteLockedError'
  constructor(
    readonly lockFile: string,
    readonly holderPid: number,
  ) {
    super(`${lockFile} is held by process ${holderPid}`)
  }
}

interface Holder {
  pid: number
  /** Start time of the process (Linux, clock ticks since boot): a reused pid has another one. */
  startTime: string | null
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
  const me: Holder = { pid: process.pid, startTime: startTimeOf(process.pid) }
  const mine = JSON.stringify(me)
  for (let attempt = 0; attempt < 100; attempt++) {
    // 'wx' is O_CREAT|O_EXCL: of two processes starting at once, exactly one creates the file.
    if (tryCreate(file, mine)) return ownLock(file, mine)
    const seen = readLock(file)
    if (seen === undefined) continue // removed between our create and our read: try again
    const holder = parseHolder(seen)
    if (holder && isAlive(holder)) throw new PGliteLockedError(file, holder.pid)
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
    }
  } catch {
    return undefined // half-written by a process that died while writing: stale
  }
}

/** The holder still runs: its pid answers, is not ours, and (where the OS tells) started when it did. */
function isAlive(holder: Holder): boolean {
  if (holder.pid === process.pid) return false // a restarted container can be pid 1 again
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
