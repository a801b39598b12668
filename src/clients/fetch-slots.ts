/**
 * The process's cap on concurrent metadata-document fetches (CLIENT_METADATA_FETCH_CONCURRENCY): a
 * counting semaphore. A fetch past the cap waits in line until a slot frees or its signal (its own
 * deadline) aborts; a slot is handed back by calling the function acquire answered, once.
 */
export interface FetchSlots {
  acquire(signal: AbortSignal): Promise<() => void>
}

export function createFetchSlots(max: number): FetchSlots {
  let free = max
  const waiting: Array<() => void> = []
  const release = () => {
    const next = waiting.shift()
    if (next) next()
    else free++
  }
  const releaseOnce = () => {
    let released = false
    return () => {
      if (released) return
      released = true
      release()
    }
  }
  return {
    acquire(signal) {
      if (signal.aborted) return Promise.reject(signal.reason)
      if (free > 0) {
        free--
        return Promise.resolve(releaseOnce())
      }
      return new Promise((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener('abort', giveUp)
          resolve(releaseOnce())
        }
        const giveUp = () => {
          waiting.splice(waiting.indexOf(grant), 1)
          reject(signal.reason)
        }
        waiting.push(grant)
        signal.addEventListener('abort', giveUp, { once: true })
      })
    },
  }
}
