import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { type CounterStore, createMemoryCounterStore } from '../../src/rate-limit/counter-store.js'
import { createRedisCounterStore } from '../../src/rate-limit/redis-counter-store.js'
import { createTestClock } from '../helpers/clock.js'
import { checkRedis, deleteKeys, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js'

const redisUp = await checkRedis()

/** A store under test, and how to let time pass for it (the test clock, or real time for Redis). */
interface Engine {
  store: CounterStore
  pass(ms: number): Promise<void>
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const prefixes: string[] = []
const connections: Redis[] = []
afterAll(async () => {
  for (const redis of connections) redis.disconnect()
  if (redisUp) for (const prefix of prefixes) await deleteKeys(prefix)
})

function memoryEngine(): Engine {
  const clock = createTestClock()
  return { store: createMemoryCounterStore(clock), pass: async (ms) => clock.advance(ms / 1000) }
}

function redisEngine(prefix = uniquePrefix()): Engine {
  const redis = new Redis(TEST_REDIS_URL)
  connections.push(redis)
  prefixes.push(prefix)
  return { store: createRedisCounterStore(redis, prefix), pass: sleep }
}

// One suite for every engine (DESIGN §7, after Hydra): each store proves itself by passing it.
// Windows are short because Redis's expiry runs on real time.
const engines: [string, () => Engine, boolean][] = [
  ['memory', memoryEngine, true],
  ['redis', () => redisEngine(), redisUp],
]

for (const [name, make, available] of engines) {
  describe.skipIf(!available)(`counter store: ${name}`, () => {
    it('counts hits in a fixed window that starts at the first hit, then starts again at 1', async () => {
      const { store, pass } = make()
      const first = await store.increment('k', 400)
      expect(first.count).toBe(1)
      expect(first.resetInMs).toBeGreaterThan(300)
      expect(first.resetInMs).toBeLessThanOrEqual(400)
      await pass(150)
      const second = await store.increment('k', 400)
      expect(second.count).toBe(2)
      expect(second.resetInMs).toBeLessThanOrEqual(260) // the window did not move
      await pass(300)
      expect((await store.increment('k', 400)).count).toBe(1)
    })

    it('with slide, remembers the key for the whole window after its last hit', async () => {
      const { store, pass } = make()
      await store.increment('s', 400, true)
      await pass(250)
      const again = await store.increment('s', 400, true)
      expect(again).toMatchObject({ count: 2 })
      expect(again.resetInMs).toBeGreaterThan(300)
      await pass(250) // 500 ms after the first hit, 250 after the last
      expect((await store.peek('s')).count).toBe(2)
      await pass(250)
      expect(await store.peek('s')).toEqual({ count: 0, resetInMs: 0 })
    })

    it('peek reads without counting; an absent key is {0, 0}', async () => {
      const { store } = make()
      expect(await store.peek('p')).toEqual({ count: 0, resetInMs: 0 })
      await store.increment('p', 10_000)
      await store.peek('p')
      const seen = await store.peek('p')
      expect(seen.count).toBe(1)
      expect(seen.resetInMs).toBeGreaterThan(9_000)
    })

    it('hold sets a key to 1 for exactly its time, whatever it held, and it ends by itself', async () => {
      const { store, pass } = make()
      for (let i = 0; i < 3; i++) await store.increment('h', 10_000)
      await store.hold('h', 300)
      const held = await store.peek('h')
      expect(held.count).toBe(1)
      expect(held.resetInMs).toBeLessThanOrEqual(300)
      await pass(350)
      expect((await store.peek('h')).count).toBe(0)
    })

    it('delete forgets keys; keys are independent', async () => {
      const { store } = make()
      await store.increment('a', 10_000)
      await store.increment('b', 10_000)
      await store.increment('c', 10_000)
      await store.delete('a', 'b')
      expect((await store.peek('a')).count).toBe(0)
      expect((await store.peek('b')).count).toBe(0)
      expect((await store.peek('c')).count).toBe(1)
    })

    it('reserve: of 50 concurrent reservations under a max of 5, exactly 5 pass; the others are told why and how long', async () => {
      const { store } = make()
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          store.reserve({ gate: 'g', counters: [{ key: 'r', windowMs: 10_000, max: 5 }] }),
        ),
      )
      const reserved = answers.filter((a) => a.reserved)
      expect(reserved.map((a) => a.reserved && a.counts[0]).sort()).toEqual([1, 2, 3, 4, 5])
      for (const refused of answers.filter((a) => !a.reserved)) {
        expect(refused).toMatchObject({ reserved: false, by: 0 })
        expect(!refused.reserved && refused.resetInMs).toBeGreaterThan(9_000)
      }
      expect((await store.peek('r')).count).toBe(5)
    })

    it('reserve: all counters or none; the gate held from the `from`-th count, growing, then refusing', async () => {
      const { store, pass } = make()
      const request = {
        gate: 'gate',
        counters: [
          { key: 'mine', windowMs: 10_000, slide: true },
          { key: 'all', windowMs: 10_000, max: 3 },
        ],
        gateHold: { from: 2, ms: [200, 400] },
      }
      expect(await store.reserve(request)).toEqual({ reserved: true, counts: [1, 1] })
      expect((await store.peek('gate')).count).toBe(0)
      expect(await store.reserve(request)).toEqual({ reserved: true, counts: [2, 2] })
      const gated = await store.reserve(request)
      expect(gated).toMatchObject({ reserved: false, by: 'gate' })
      expect(!gated.reserved && gated.resetInMs).toBeLessThanOrEqual(200)
      await pass(250)
      expect(await store.reserve(request)).toEqual({ reserved: true, counts: [3, 3] })
      expect((await store.peek('gate')).resetInMs).toBeGreaterThan(200) // the last hold (400) holds on
      await pass(450)
      // `all` is at its max: refused, and `mine` did not count either.
      expect(await store.reserve(request)).toMatchObject({ reserved: false, by: 1 })
      expect((await store.peek('mine')).count).toBe(3)
    })

    it('release takes one back, never below 0, and keeps the window', async () => {
      const { store } = make()
      await store.reserve({ gate: 'g2', counters: [{ key: 'x', windowMs: 10_000, max: 1 }] })
      expect(
        await store.reserve({ gate: 'g2', counters: [{ key: 'x', windowMs: 10_000, max: 1 }] }),
      ).toMatchObject({ reserved: false })
      await store.release('x', 'absent')
      await store.release('x')
      const x = await store.peek('x')
      expect(x.count).toBe(0)
      expect(x.resetInMs).toBeGreaterThan(9_000)
      expect(
        await store.reserve({ gate: 'g2', counters: [{ key: 'x', windowMs: 10_000, max: 1 }] }),
      ).toMatchObject({ reserved: true, counts: [1] })
      expect((await store.peek('absent')).count).toBe(0)
    })
  })
}

describe('memory store', () => {
  it('keeps at most maxKeys keys, dropping the least recently used first', async () => {
    const store = createMemoryCounterStore(createTestClock(), 3)
    for (const key of ['a', 'b', 'c']) await store.increment(key, 10_000)
    await store.increment('a', 10_000) // a is now the most recently used
    await store.increment('d', 10_000)
    expect((await store.peek('b')).count).toBe(0)
    expect((await store.peek('a')).count).toBe(2)
    expect((await store.peek('c')).count).toBe(1)
    expect((await store.peek('d')).count).toBe(1)
  })
})

describe.skipIf(!redisUp)('redis store', () => {
  it('keeps its keys under its prefix, so two prefixes never count together', async () => {
    const one = redisEngine()
    const prefix = uniquePrefix()
    const other = redisEngine(prefix)
    await one.store.increment('shared-name', 10_000)
    await one.store.increment('shared-name', 10_000)
    expect((await other.store.peek('shared-name')).count).toBe(0)
    const raw = new Redis(TEST_REDIS_URL)
    connections.push(raw)
    await other.store.increment('shared-name', 10_000)
    expect(await raw.get(`${prefix}shared-name`)).toBe('1')
    expect(await raw.pttl(`${prefix}shared-name`)).toBeGreaterThan(9_000)
  })

  it('counts concurrent increments exactly (one atomic script per hit)', async () => {
    const { store } = redisEngine()
    const counts = await Promise.all(Array.from({ length: 50 }, () => store.increment('race', 10_000)))
    expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    )
  })
})
