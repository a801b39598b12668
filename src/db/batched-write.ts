/**
 * Writes asked for in the same turn of the event loop go to the database as ONE statement, the way
 * batchedLookup does for reads.
 *
 * Why: a token request is one write statement (a code redemption, a refresh rotation; a returning
 * user's authorization is one too), and measured
 * with `perf` on PostgreSQL most of what it costs the database is per statement, not per row: starting
 * the executor for the statement's plan, preparing the tables' CHECK constraints, its round trip, and
 * the commit with its WAL flush (fdatasync) — about 80 µs of PostgreSQL CPU for a one-row insert on
 * the bench machine against about 20 µs a row when eight rows share the statement. Under load the
 * requests of many connections are parsed in one I/O phase of the loop; here their writes wait until
 * that phase ends (setImmediate: no timer, the same iteration) and go out together.
 *
 * What stays as it was:
 * - Alone, a write runs `many` with a list of one: the same statement a request ran before it was
 *   shared, with one row.
 * - Each input of a batch meets the same checks under the same row locks as it would alone (the
 *   batched statement is the one-row statement over a list of inputs); PostgreSQL's row locks
 *   serialise it against other statements as before.
 * - Inputs with the same `key` (the same code or token presented twice at once) never share a batch:
 *   one statement cannot update one row twice. They go in separate statements, which meet on the
 *   row's lock as two single statements would. Inside a batch, inputs are sorted by key, so two
 *   batches lock their rows in the same order.
 * - If the batched statement fails for any reason, it wrote nothing (one statement, atomic), and each
 *   of its inputs runs again on its own (a list of one): a failure belongs to the input that causes it
 *   (say, a grant revoked mid-statement), never to its neighbours.
 *
 * `many` answers one value per input, in the inputs' order (a list of another length is a failure).
 *
 * Rounds in flight: at most `maxInFlight` rounds (the batches one flush sends) wait on the database at
 * once; writes asked for meanwhile queue and leave together when a round ends, as PostgreSQL's group
 * commit does with WAL flushes. At a few connections a turn of the loop rarely parses more than one
 * request, so without this a lone exchange paid a statement and a commit of its own; with it, the
 * requests that arrive while one statement runs share the next (issue 41 part 2). A round's wait is
 * bounded by one statement's time, so a request waits at most for the round ahead of it.
 */
export function batchedWrite<Input, Output>(options: {
  many: (inputs: Input[]) => Promise<Output[]>
  key: (input: Input) => string
  maxBatch?: number
  maxInFlight?: number
}): (input: Input) => Promise<Output> {
  const maxBatch = options.maxBatch ?? 64
  const maxInFlight = options.maxInFlight ?? 1
  let queue: Waiting<Input, Output>[] = []
  let inFlight = 0
  let scheduled = false

  /** Flushes at the end of this turn of the loop, unless rounds enough are already out. */
  function schedule(): void {
    if (scheduled || inFlight >= maxInFlight || queue.length === 0) return
    scheduled = true
    setImmediate(flush)
  }

  /** Runs `many` over `inputs` and checks that it answered each one. */
  async function run(inputs: Input[]): Promise<Output[]> {
    const outputs = await options.many(inputs)
    if (outputs.length !== inputs.length)
      throw new Error(`batchedWrite: ${outputs.length} answers for ${inputs.length} inputs`)
    return outputs
  }

  function runAlone(w: Waiting<Input, Output>): Promise<void> {
    return run([w.input]).then((outputs) => w.resolve(outputs[0]!), w.reject)
  }

  async function runBatch(batch: Waiting<Input, Output>[]): Promise<void> {
    if (batch.length === 1) return runAlone(batch[0]!)
    batch.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    let outputs: Output[]
    try {
      outputs = await run(batch.map((w) => w.input))
    } catch {
      await Promise.all(batch.map(runAlone))
      return
    }
    batch.forEach((w, i) => w.resolve(outputs[i]!))
  }

  function flush(): void {
    scheduled = false
    const waiting = queue
    queue = []
    const batches: { members: Waiting<Input, Output>[]; keys: Set<string> }[] = []
    for (const w of waiting) {
      let batch = batches.find((b) => b.members.length < maxBatch && !b.keys.has(w.key))
      if (!batch) {
        batch = { members: [], keys: new Set() }
        batches.push(batch)
      }
      batch.members.push(w)
      batch.keys.add(w.key)
    }
    inFlight++
    void Promise.all(batches.map((batch) => runBatch(batch.members))).finally(() => {
      inFlight--
      schedule()
    })
  }

  return (input) =>
    new Promise<Output>((resolve, reject) => {
      queue.push({ input, key: options.key(input), resolve, reject })
      schedule()
    })
}

interface Waiting<Input, Output> {
  input: Input
  key: string
  resolve(value: Output): void
  reject(reason: unknown): void
}
