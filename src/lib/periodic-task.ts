/**
 * Work a server does on a schedule (housekeeping, the signing-key schedule): one run every
 * `intervalMs`, the first one interval after start; runs of one process never overlap (a run asked
 * for while one is under way starts after it); a failed run is the task's own to log, and the next
 * one is scheduled all the same. The timer never keeps the process alive.
 */
export function createPeriodicTask<T>(options: { intervalMs: number; run: () => Promise<T> }) {
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let current: Promise<unknown> | undefined

  function run(): Promise<T> {
    const previous = current
    const next = (async () => {
      await previous?.catch(() => undefined)
      return options.run()
    })()
    current = next
    return next
  }

  function schedule(): void {
    if (stopped || options.intervalMs <= 0) return
    timer = setTimeout(() => {
      run()
        .catch(() => undefined)
        .finally(schedule)
    }, options.intervalMs)
    timer.unref()
  }

  return {
    /** One run now, after any run under way. */
    run,
    /** Starts the schedule (an interval of 0: never); again after a stop too. */
    start(): void {
      if (timer && !stopped) return
      stopped = false
      schedule()
    },
    /** Stops the schedule and waits for a run under way. */
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(timer)
      timer = undefined
      await current?.catch(() => undefined)
    },
    /** True once stop() was called: a long run checks it between its steps. */
    get stopped(): boolean {
      return stopped
    },
  }
}
