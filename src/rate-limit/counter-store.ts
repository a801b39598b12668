import type { Clock } from '../lib/clock.js'

/** What a limit remembers about one key: how many hits, and how long until it is forgotten. */
export interface Count {
  count: number
  resetInMs: number
}

/**
 * Counters that expire: in memory (this process only) or in Redis (shared by every instance and
 * worker). Every rate limit of linkauth keeps its state here, under keys `<limit>:<subject>`.
 */
export interface CounterStore {
  /**
   * Adds one to `key`. Its window of `windowMs` starts at its first hit (a fixed window), or with
   * `slide` again at every hit (remembered `windowMs` after the last one).
   */
  increment(key: string, windowMs: number, slide?: boolean): Promise<Count>
  /** The count and the time left, without changing them; {0, 0} when absent or expired. */
  peek(key: string): Promise<Count>
  /** Sets `key` to 1 for exactly `ms`, whatever it held: a lock that ends by itself. */
  hold(key: string, ms: number): Promise<void>
  delete(...keys: string[]): Promise<void>
  /**
   * Reserves one unit of every counter at once, or none: refused while `gate` is held (its time
   * left) or while any counter with a `max` already holds that many (its time left). Otherwise adds
   * one to each counter, as increment() does, and holds `gate` as `gateHold` says for the first
   * counter's new count. One step, so that concurrent callers on any instance can never reserve past
   * a limit together.
   */
  reserve(request: ReserveRequest): Promise<Reserved>
  /** Takes one back from each key that holds more than 0 (a reservation that did not count), keeping its expiry. */
  release(...keys: string[]): Promise<void>
}

export interface ReservedCounter {
  key: string
  windowMs: number
  slide?: boolean
  /** Refuse once the counter holds this many; no limit when absent. */
  max?: number
}

export interface ReserveRequest {
  gate: string
  counters: readonly ReservedCounter[]
  /** From the `from`-th count on, the gate is held ms[count - from] ms (the last entry past its end). */
  gateHold?: { from: number; ms: readonly number[] }
}

/** What reserve() did: every counter's new count, or who refused (the gate, or a counter's index) and for how long. */
export type Reserved =
  { reserved: true; counts: number[] } | { reserved: false; by: 'gate' | number; resetInMs: number }

/** How long the gate is held after the first counter reached `count` (0: not held). */
export function gateHoldFor(hold: ReserveRequest['gateHold'], count: number): number {
  if (!hold || count < hold.from || hold.ms.length === 0) return 0
  return hold.ms[Math.min(count - hold.from, hold.ms.length - 1)]!
}

const NOTHING: Count = { count: 0, resetInMs: 0 }

/**
 * The in-memory store: a Map in insertion order used as an LRU, so its size is bounded whatever an
 * attacker sends. Time comes from the injected clock, so tests can move it.
 */
export function createMemoryCounterStore(clock: Clock, maxKeys = 100_000): CounterStore {
  const entries = new Map<string, { count: number; expiresAt: number }>()
  const now = () => clock.now().getTime()

  function live(key: string) {
    const entry = entries.get(key)
    if (entry && entry.expiresAt <= now()) {
      entries.delete(key)
      return undefined
    }
    return entry
  }

  function put(key: string, entry: { count: number; expiresAt: number }) {
    entries.delete(key) // re-inserted last: the most recently used
    entries.set(key, entry)
    if (entries.size > maxKeys) entries.delete(entries.keys().next().value!)
  }

  return {
    async increment(key, windowMs, slide = false) {
      const entry = live(key)
      const t = now()
      const next = entry
        ? { count: entry.count + 1, expiresAt: slide ? t + windowMs : entry.expiresAt }
        : { count: 1, expiresAt: t + windowMs }
      put(key, next)
      return { count: next.count, resetInMs: next.expiresAt - t }
    },
    async peek(key) {
      const entry = live(key)
      return entry ? { count: entry.count, resetInMs: entry.expiresAt - now() } : NOTHING
    },
    async hold(key, ms) {
      put(key, { count: 1, expiresAt: now() + ms })
    },
    async delete(...keys) {
      for (const key of keys) entries.delete(key)
    },
    // No await inside: JavaScript runs it to the end before any other caller, so it is atomic.
    async reserve({ gate, counters, gateHold }) {
      const held = live(gate)
      const t = now()
      if (held) return { reserved: false, by: 'gate', resetInMs: held.expiresAt - t }
      for (const [i, counter] of counters.entries()) {
        const entry = live(counter.key)
        if (counter.max !== undefined && (entry?.count ?? 0) >= counter.max)
          return { reserved: false, by: i, resetInMs: entry ? entry.expiresAt - t : 0 }
      }
      const counts = counters.map((counter) => {
        const entry = live(counter.key)
        const expiresAt = entry && !counter.slide ? entry.expiresAt : t + counter.windowMs
        put(counter.key, { count: (entry?.count ?? 0) + 1, expiresAt })
        return (entry?.count ?? 0) + 1
      })
      const hold = gateHoldFor(gateHold, counts[0] ?? 0)
      if (hold > 0) put(gate, { count: 1, expiresAt: t + hold })
      return { reserved: true, counts }
    },
    async release(...keys) {
      for (const key of keys) {
        const entry = live(key)
        if (entry && entry.count > 0) entry.count -= 1
      }
    },
  }
}
