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

// KEYS[1] the gate, KEYS[2..] the counters. ARGV: per counter (windowMs, slide, max or -1), then
// the first count that holds the gate, then the holds (gateHoldFor's rule). Answers {0, 0, count…} when reserved, else {1 (gate) or 1 + counter, ttl}.
const RESERVE = `
local gate = redis.call('PTTL', KEYS[1])
if gate ~= -2 then
  if gate < 0 then gate = 0 end
  return {1, gate}
end
local n = #KEYS - 1
for i = 1, n do
  local max = tonumber(ARGV[3 * i])
  if max >= 0 then
    local count = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
    if count >= max then
      local ttl = redis.call('PTTL', KEYS[i + 1])
      if ttl < 0 then ttl = 0 end
      return {1 + i, ttl}
    end
  end
end
local answer = {0, 0}
for i = 1, n do
  local window = ARGV[3 * i - 2]
  local count = redis.call('INCR', KEYS[i + 1])
  if count == 1 or ARGV[3 * i - 1] == '1' or redis.call('PTTL', KEYS[i + 1]) < 0 then
    redis.call('PEXPIRE', KEYS[i + 1], window)
  end
  answer[#answer + 1] = count
end
local holds = #ARGV - 3 * n - 1
local from = tonumber(ARGV[3 * n + 1])
if holds > 0 and n > 0 and answer[3] >= from then
  local hold = tonumber(ARGV[3 * n + 2 + math.min(answer[3] - from, holds - 1)])
  if hold > 0 then redis.call('SET', KEYS[1], '1', 'PX', hold) end
end
return answer
`
const RELEASE = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0
`

interface CounterCommands {
  linkauthIncrement(key: string, windowMs: number, slide: '0' | '1'): Promise<[number, number]>
  linkauthPeek(key: string): Promise<[number, number]>
  linkauthReserve(...keysThenArgs: (string | number)[]): Promise<number[]>
  linkauthRelease(numberOfKeys: number, ...keys: string[]): Promise<number>
}

/** The shared store: counters in Redis under `prefix`, expiring by Redis's own TTLs. */
export function createRedisCounterStore(redis: Redis, prefix: string): CounterStore {
  redis.defineCommand('linkauthIncrement', { numberOfKeys: 1, lua: INCREMENT })
  redis.defineCommand('linkauthPeek', { numberOfKeys: 1, lua: PEEK })
  redis.defineCommand('linkauthReserve', { lua: RESERVE })
  redis.defineCommand('linkauthRelease', { lua: RELEASE })
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
    async reserve({ gate, counters, gateHold }) {
      const keys = [gate, ...counters.map((c) => c.key)].map((k) => prefix + k)
      const args = counters.flatMap((c) => [c.windowMs, c.slide ? '1' : '0', c.max ?? -1])
      const [status, resetInMs, ...counts] = await commands.linkauthReserve(
        keys.length,
        ...keys,
        ...args,
        gateHold?.from ?? 0,
        ...(gateHold?.ms ?? []),
      )
      if (status === 0) return { reserved: true, counts }
      return { reserved: false, by: status === 1 ? 'gate' : status! - 2, resetInMs: resetInMs! }
    },
    async release(...keys) {
      if (keys.length > 0) await commands.linkauthRelease(keys.length, ...keys.map((k) => prefix + k))
    },
  }
}
