/** Why a held poll stopped waiting: look again, the wait is over, or the server is stopping. */
export type WakeOutcome = 'wake' | 'timeout' | 'closed'

/** One held poll's wait, armed before it reads the database so that no commit in between is missed. */
export interface ArmedWait {
  /**
   * Resolves at the first of: a wake since arming, `ms` elapsed, the hub closing, `signal` aborting
   * (the client went away: 'closed'). While the hub is not listening, it resolves 'wake' after
   * the fallback interval at the latest, so that the caller looks again.
   */
  wait(ms: number, signal?: AbortSignal): Promise<WakeOutcome>
  dispose(): void
}

/**
 * The one place held polls wait in a process: a single notification listener wakes every one of
 * them (fan-out), rather than one database connection per waiting request.
 */
export function createPollWakeup(options: { fallbackMs: number }) {
  const armed = new Set<{ wake(): void; close(): void }>()
  let listening = false
  let closed = false

  function arm(): ArmedWait {
    let woken = false
    let settle: ((outcome: WakeOutcome) => void) | undefined
    const entry = {
      wake() {
        woken = true
        settle?.('wake')
      },
      close: () => settle?.('closed'),
    }
    armed.add(entry)
    return {
      wait(ms, signal) {
        if (closed || signal?.aborted) return Promise.resolve('closed')
        if (woken) return Promise.resolve('wake')
        const fallback = !listening && ms > options.fallbackMs
        return new Promise((resolve) => {
          const onAbort = () => settle?.('closed')
          const timer = setTimeout(
            () => settle?.(fallback ? 'wake' : 'timeout'),
            fallback ? options.fallbackMs : ms,
          )
          signal?.addEventListener('abort', onAbort, { once: true })
          settle = (outcome) => {
            settle = undefined
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve(outcome)
          }
        })
      },
      dispose() {
        armed.delete(entry)
        settle?.('closed')
      },
    }
  }

  return {
    arm,
    /** Something was committed: every held poll looks again. */
    wakeAll(): void {
      for (const entry of [...armed]) entry.wake()
    },
    /**
     * The listener's state. Either change wakes everyone: after a loss, waits must shorten to the
     * fallback; after (re)connecting, events may have been committed while nobody listened.
     */
    setListening(value: boolean): void {
      listening = value
      for (const entry of [...armed]) entry.wake()
    },
    /** Polls armed right now (held, or reading before they wait): a metric. */
    get waiting(): number {
      return armed.size
    },
    /** The server is stopping: every held poll answers now, and later ones do not wait. */
    close(): void {
      closed = true
      for (const entry of [...armed]) entry.close()
    },
  }
}

export type PollWakeup = ReturnType<typeof createPollWakeup>
