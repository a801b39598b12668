import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'

/**
 * Tests of the Redis store run against the Redis on 127.0.0.1:6379 (TEST_REDIS_URL to change it).
 * Without one they are skipped with one line saying why, unless REQUIRE_REDIS=1 (CI), where a
 * missing Redis fails the run. Each test uses keys under a prefix of its own.
 */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379'
export const REDIS_REQUIRED = process.env.REQUIRE_REDIS === '1'
export const NO_REDIS_REASON = `Redis tests skipped: nothing answers PING at ${TEST_REDIS_URL} (REQUIRE_REDIS=1 turns this skip into a failure)`

/**
 * Whether Redis answers; throws when it does not and REQUIRE_REDIS=1. The global setup asks once
 * per run with `announce`, printing the one skip line; the test files ask again quietly.
 */
export async function checkRedis({ announce = false } = {}): Promise<boolean> {
  const redis = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return (await redis.ping()) === 'PONG'
  } catch {
    if (REDIS_REQUIRED) throw new Error(`REQUIRE_REDIS=1 but Redis does not answer at ${TEST_REDIS_URL}`)
    if (announce) console.log(NO_REDIS_REASON)
    return false
  } finally {
    redis.disconnect()
  }
}

/** A key prefix no other test (or run) uses. */
export function uniquePrefix(): string {
  return `linkauth-test:${randomBytes(6).toString('hex')}:`
}

/** Removes every key under `prefix` (keys expire by themselves; this keeps a shared Redis tidy). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true })
  await redis.connect()
  try {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  } finally {
    redis.disconnect()
  }
}
