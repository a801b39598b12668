/**
 * Lookups asked for in the same turn of the event loop go to the database as ONE statement.
 *
 * Under load, the requests of many connections are parsed in one I/O phase of the loop, and each
 * would send its own statement: a socket write and a read on both sides, and PostgreSQL's per-statement
 * work, for a primary-key lookup that costs less than all of that. Here the lookups of that phase wait
 * until it ends (setImmediate: the same iteration of the loop, no timer) and `load` runs once for up to
 * `maxBatch` of them. Alone, a lookup costs what it did before.
 *
 * Consistency is unchanged: each statement starts after every lookup in it was asked for, so each
 * answer sees everything committed before its request arrived, as a statement of its own would have.
 *
 * `load` answers with one value per key, in the keys' order. If it fails, every lookup of its batch
 * fails with the same error (each request then answers as it would have on its own failure).
 */
export function batchedLookup<Key, Value>(
  load: (keys: Key[]) => Promise<Value[]>,
  maxBatch = 128,
): (key: Key) => Promise<Value> {
  let queue: Waiting<Key, Value>[] = []

  function flush(): void {
    const waiting = queue
    queue = []
    for (let start = 0; start < waiting.length; start += maxBatch) {
      const batch = waiting.slice(start, start + maxBatch)
      Promise.resolve()
        .then(() => load(batch.map((w) => w.key)))
        .then((values) => {
          if (values.length !== batch.length)
            throw new Error(`batchedLookup: ${values.length} answers for ${batch.length} keys`)
          batch.forEach((w, i) => w.resolve(values[i]!))
        })
        .catch((err: unknown) => {
          for (const w of batch) w.reject(err)
        })
    }
  }

  return (key) =>
    new Promise<Value>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ key, resolve, reject })
    })
}

interface Waiting<Key, Value> {
  key: Key
  resolve(value: Value): void
  reject(reason: unknown): void
}
