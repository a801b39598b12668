import type { Redis } from 'ioredis'
import type { Count, CounterStore } from './counter-store.js'

// One round trip each, atomic in Redis: concurrent requests on any instance see one count.
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ARGV[2] == '1' or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`
const PEEK = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 0 end
return {tonumber(count), ttl}
`

interface CounterCommands {
  linkauthIncrement(key: string, windowMs: number, slide: '0' | '1'): Promise<[number, number]>
  linkauthPeek(key: string): Promise<[number, number]>
}

/** The shared store: counters in Redis under `prefix`, expiring by Redis's own TTLs. */
export function createRedisCounterStore(redis: Redis, prefix: string): CounterStore {
  redis.defineCommand('linkauthIncrement', { numberOfKeys: 1, lua: INCREMENT })
  redis.defineCommand('linkauthPeek', { numberOfKeys: 1, lua: PEEK })
  const commands = redis as unknown as CounterCommands
  const toCount = ([count, resetInMs]: [number, number]): Count => ({ count, resetInMs })
  return {
    increment: async (key, windowMs, slide = false) =>
      toCount(await commands.linkauthIncrement(prefix + key, windowMs, slide ? '1' : '0')),
    peek: async (key) => toCount(await commands.linkauthPeek(prefix + key)),
    async hold(key, ms) {
      await redis.set(prefix + key, '1', 'PX', ms)
    },
    async delete(...keys) {
      if (keys.length > 0) await redis.del(...keys.map((k) => prefix + k))
    },
  }
}
