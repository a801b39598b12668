/**
 * The replay state of DPoP (RFC 9449 §11.1): where the `jti`s of accepted proofs are kept for as long
 * as a proof is acceptable, in this process's memory or in Redis shared by every instance. The
 * checks of a proof (dpop-proof.ts) use a store only through DpopReplayStore.
 */

/**
 * Where the `jti`s of accepted proofs are kept for as long as a proof is acceptable (§11.1). It must
 * hold across every instance that accepts proofs for the same URLs (a database table or Redis).
 */
export interface DpopReplayStore {
  /**
   * Remember `key` until `expiresAt` (epoch seconds); true when it was not already there (the proof
   * is new), false when it was (a replay). Atomic: of two concurrent calls with one key, one gets true.
   */
  remember(key: string, expiresAt: number): Promise<boolean>
}

/**
 * Thrown by a replay store that cannot remember one more jti without forgetting one that is still
 * unexpired (which would let that proof be replayed): the proof is refused, `replay_store_full`.
 */
export class DpopReplayStoreFullError extends Error {
  override name = 'DpopReplayStoreFullError'
  constructor() {
    super('the DPoP replay store is full of unexpired jtis')
  }
}

export interface MemoryReplayStoreOptions {
  /**
   * At most this many jtis are held (default 100 000). Expired ones make room; an unexpired one is
   * never forgotten: when all are unexpired a new proof is refused (DpopReplayStoreFullError).
   */
  maxEntries?: number
  /** Epoch seconds now (tests move it); default the system clock. */
  now?: () => number
}

/**
 * A replay store in this process's memory: right for one instance. Several instances behind a load
 * balancer need one store they share, or a proof refused by one is accepted by another.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): DpopReplayStore {
  const maxEntries = options.maxEntries ?? 100_000
  const clock = options.now ?? (() => Date.now() / 1000)
  const seen = new Map<string, number>()
  let sweptAt = -Infinity
  /**
   * Makes room: the oldest insertions first while they are expired (one window for all, so they are
   * nearly in expiry order), then, at most once a second, the whole map; a flood of new proofs
   * therefore costs no full pass per request.
   */
  const makeRoom = (now: number) => {
    for (const [key, expiresAt] of seen) {
      if (expiresAt > now) break
      seen.delete(key)
    }
    if (seen.size < maxEntries || now - sweptAt < 1) return
    sweptAt = now
    for (const [key, expiresAt] of seen) if (expiresAt <= now) seen.delete(key)
  }
  return {
    remember(key, expiresAt) {
      const now = clock()
      const known = seen.get(key)
      if (known !== undefined && known > now) return Promise.resolve(false)
      if (seen.size >= maxEntries && known === undefined) makeRoom(now)
      if (seen.size >= maxEntries && known === undefined)
        return Promise.reject(new DpopReplayStoreFullError())
      seen.delete(key)
      seen.set(key, expiresAt)
      return Promise.resolve(true)
    },
  }
}

/** The one Redis command the store needs, as ioredis and node-redis v4 (legacy mode) type it. */
export interface RedisSetNx {
  set(key: string, value: string, expiry: 'EXAT', at: number, flag: 'NX'): Promise<unknown>
}

/**
 * A replay store in Redis (6.2 or newer, for EXAT), shared by every instance of the API: `SET key 1
 * EXAT <expiry> NX` is atomic, so of two instances seeing one proof only one accepts it.
 */
export function createRedisReplayStore(redis: RedisSetNx, prefix = 'dpop-jti:'): DpopReplayStore {
  return {
    async remember(key, expiresAt) {
      return (await redis.set(`${prefix}${key}`, '1', 'EXAT', Math.ceil(expiresAt), 'NX')) === 'OK'
    },
  }
}
