import type { Clock } from '../../src/lib/clock.js'

/** A clock that stands still until a test moves it. */
export interface TestClock extends Clock {
  advance(seconds: number): void
  set(date: Date): void
}

export function createTestClock(start = new Date()): TestClock {
  let current = new Date(start)
  return {
    now: () => new Date(current),
    advance: (seconds) => {
      current = new Date(current.getTime() + seconds * 1000)
    },
    set: (date) => {
      current = new Date(date)
    },
  }
}

/** A clock that keeps real time, moved ahead by what a test adds with advance(). */
export function createRunningClock(): Pick<TestClock, 'now' | 'advance'> {
  let offsetMs = 0
  return {
    now: () => new Date(Date.now() + offsetMs),
    advance: (seconds) => {
      offsetMs += seconds * 1000
    },
  }
}
