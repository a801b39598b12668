import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Clock } from '../lib/clock.js'
import type { Metrics } from '../metrics/metrics.js'
import { type CounterStore, createMemoryCounterStore } from './counter-store.js'
import { createRedisCounterStore } from './redis-counter-store.js'

/** At most one warning a minute while Redis is away: an outage must not flood the logs. */
const WARN_EVERY_MS = 60_000

export interface RateLimitStore {
  store: CounterStore
  /** 'redis' when REDIS_URL is set (limits shared by every instance), else 'memory' (this process). */
  kind: 'redis' | 'memory'
  /** The Redis connection when REDIS_URL is set, for other state shared across instances (DPoP proofs seen). */
  redis?: Redis
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * The store every rate limit counts in. Without REDIS_URL: memory, per process. With it: Redis,
 * and when Redis cannot answer, this process's memory instead (fail open to a per-process limit,
 * never to no limit and never to refusing everyone): each failed operation is counted in
 * linkauth_rate_limit_store_errors_total and logged as a warning at most once a minute.
 */
export function createRateLimitStore(deps: {
  config: Pick<Config, 'rateLimits' | 'redisUrl' | 'rateLimitRedisPrefix'>
  clock: Clock
  logger: Logger
  metrics: Pick<Metrics, 'rateLimitStoreErrors'>
}): RateLimitStore {
  const memory = createMemoryCounterStore(deps.clock)
  // With the limits off (benchmarks) nothing counts, so nothing connects either.
  const url = deps.config.rateLimits ? deps.config.redisUrl : undefined
  if (!url) return { store: memory, kind: 'memory', start: async () => {}, stop: async () => {} }

  const log = deps.logger.child({ component: 'rate-limit-store' })
  const redis = new Redis(url, {
    lazyConnect: true,
    // While disconnected, fail at once (and count in memory) rather than queue behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A stalled Redis must not stall sign-ins: past this, the operation counts in memory.
    commandTimeout: 500,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  })
  let lastWarning = -Infinity
  let failing = false
  redis.on('error', () => {}) // every failure is reported below, where it changes what we do
  redis.on('ready', () => {
    if (failing) log.info('Redis answers again: rate limits are shared across instances again')
    failing = false
  })
  const shared = createRedisCounterStore(redis, deps.config.rateLimitRedisPrefix)

  function fellBack(err: unknown) {
    deps.metrics.rateLimitStoreErrors.inc()
    failing = true
    const now = Date.now()
    if (now - lastWarning >= WARN_EVERY_MS) {
      lastWarning = now
      log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'Redis does not answer: rate limits count in this process only until it is back',
      )
    }
  }

  function failover<A extends unknown[], R>(op: (s: CounterStore) => (...args: A) => Promise<R>) {
    return async (...args: A): Promise<R> => {
      try {
        return await op(shared)(...args)
      } catch (err) {
        fellBack(err)
        return op(memory)(...args)
      }
    }
  }

  return {
    kind: 'redis',
    redis,
    store: {
      increment: failover((s) => s.increment),
      peek: failover((s) => s.peek),
      hold: failover((s) => s.hold),
      delete: failover((s) => s.delete),
      reserve: failover((s) => s.reserve),
      release: failover((s) => s.release),
    },
    async start() {
      try {
        await redis.connect()
      } catch (err) {
        // Not fatal: ioredis keeps reconnecting, and until then limits count in memory.
        fellBack(err)
      }
    },
    async stop() {
      try {
        await redis.quit()
      } catch {
        redis.disconnect()
      }
    },
  }
}
