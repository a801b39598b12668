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
  }
}
