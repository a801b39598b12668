import { describe, expect, it } from 'vitest'
import { batchedLookup } from '../../src/db/batched-lookup.js'

/** A load function that records each batch it was given and answers key * 10. */
function recordingLoad() {
  const batches: number[][] = []
  const load = async (keys: number[]) => {
    batches.push(keys)
    return keys.map((k) => k * 10)
  }
  return { batches, load }
}

describe('batchedLookup', () => {
  it('answers the lookups of one turn of the event loop with one load, each with its own value', async () => {
    const { batches, load } = recordingLoad()
    const lookup = batchedLookup(load)
    const answers = await Promise.all([lookup(1), lookup(2), lookup(3)])
    expect(answers).toEqual([10, 20, 30])
    expect(batches).toEqual([[1, 2, 3]])
  })

  it('loads again for lookups asked after the batch left, and alone costs one load each', async () => {
    const { batches, load } = recordingLoad()
    const lookup = batchedLookup(load)
    expect(await lookup(1)).toBe(10)
    expect(await lookup(2)).toBe(20)
    expect(batches).toEqual([[1], [2]])
  })

  it('splits a large turn into batches of at most maxBatch', async () => {
    const { batches, load } = recordingLoad()
    const lookup = batchedLookup(load, 4)
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => lookup(i)))
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => i * 10))
    expect(batches.map((b) => b.length)).toEqual([4, 4, 2])
  })

  it('fails every lookup of a failed batch, and only those', async () => {
    let calls = 0
    const lookup = batchedLookup(async (keys: number[]) => {
      calls++
      if (calls === 1) throw new Error('database down')
      return keys
    })
    const failed = await Promise.allSettled([lookup(1), lookup(2)])
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await lookup(3)).toBe(3)
  })

  it('fails a batch whose load answers a different number of values, and a load that throws at once', async () => {
    const short = batchedLookup(async (keys: number[]) => keys.slice(1))
    await expect(Promise.all([short(1), short(2)])).rejects.toThrow(/1 answers for 2 keys/)
    const throwing = batchedLookup((): Promise<number[]> => {
      throw new Error('synchronous')
    })
    await expect(throwing(1)).rejects.toThrow('synchronous')
  })
})
