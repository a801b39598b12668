import { createHmac } from 'node:crypto'
import type { Config } from '../config.js'
import type { CounterStore, ReservedCounter } from '../rate-limit/counter-store.js'

/**
 * Who is trying: a browser that signed in to this account before (its known-device id), or else
 * the client's address. A known device is never held back by what other clients do.
 */
export type SignInClient = { device: string } | { address: string }

/** An attempt held back: which limit, and for how long. */
export interface SignInHold {
  limit: string
  retryAfterMs: number
}

/** Which hold a failure started: the per-client delay, or the per-account limit. */
export type SignInLockout = 'sign_in_delay' | 'sign_in_account'

/** The outcome of a password check run under the throttle. */
export type Throttled<T> = { held: SignInHold } | { result: T; lockout?: SignInLockout }

/**
 * Sign-in failures, counted per account (the email as typed, whether or not it exists, so the
 * answers never tell which accounts exist) and held back in two ways:
 *
 * - per (account, client): the first SIGN_IN_FREE_FAILURES failures cost nothing; from then on each
 *   failure makes that client wait before its next attempt, 1 s doubling up to SIGN_IN_MAX_DELAY.
 *   Remembered SIGN_IN_FAILURE_TTL after the last failure; a successful sign-in forgets them.
 * - per account, for clients it does not know: at most SIGN_IN_ACCOUNT_LIMIT failures per fixed
 *   window of SIGN_IN_ACCOUNT_WINDOW. This bounds guessing from many addresses; it expires by
 *   itself, and never applies to the user's known devices, so an attacker cannot keep the user out.
 *
 * Every attempt is counted as a failure BEFORE its password is checked, in one atomic step of the
 * store (reserve: shared by every instance with Redis), and the delay it would start begins then: so
 * however many attempts race, no more passwords are checked than the limits allow. The outcome then
 * settles it: a failure keeps the reservation, a success gives it back (and forgets the client's
 * failures), an error before any verdict gives it back too. Attempts held back are refused before
 * the password is checked, so they cost no argon2 work and do not count.
 */
export function createSignInThrottle(
  store: CounterStore,
  config: Pick<
    Config,
    | 'rateLimits'
    | 'cookieSecret'
    | 'signInFreeFailures'
    | 'signInMaxDelay'
    | 'signInFailureTtl'
    | 'signInAccountLimit'
    | 'signInAccountWindow'
  >,
) {
  // Keys name accounts by an HMAC of the email: Redis never holds an email, nor a plain hash of one.
  const key = config.cookieSecret ?? 'linkauth sign-in throttle'
  const clientKey = (account: string, client: SignInClient) =>
    `${account}:${'device' in client ? `d.${client.device}` : `a.${client.address}`}`
  const delayMs = (failures: number) =>
    Math.min(2 ** (failures - config.signInFreeFailures), config.signInMaxDelay) * 1000
  // The delays from the last free failure on, until the cap (which then holds for every later one).
  const from = Math.max(1, config.signInFreeFailures)
  const delays = { from, ms: [delayMs(from)] }
  while (delays.ms.at(-1)! < config.signInMaxDelay * 1000) delays.ms.push(delayMs(from + delays.ms.length))

  interface Reservation {
    lockout: SignInLockout | undefined
    succeeded(): Promise<void>
    abandoned(): Promise<void>
  }

  /** Counts the attempt as a failure before its password is checked, or holds it back. */
  async function reserve(account: string, client: SignInClient): Promise<{ held: SignInHold } | Reservation> {
    const id = clientKey(account, client)
    const counters: ReservedCounter[] = [
      { key: `sign-in-failures:${id}`, windowMs: config.signInFailureTtl * 1000, slide: true },
    ]
    if (!('device' in client))
      counters.push({
        key: `sign-in-account:${account}`,
        windowMs: config.signInAccountWindow * 1000,
        max: config.signInAccountLimit,
      })
    const gate = `sign-in-delay:${id}`
    const reserved = await store.reserve({ gate, counters, gateHold: delays })
    if (!reserved.reserved) {
      const limit = reserved.by === 'gate' ? 'sign_in_delay' : 'sign_in_account'
      return { held: { limit, retryAfterMs: reserved.resetInMs } }
    }
    const [failures, perAccount] = reserved.counts
    // The moment of a lockout (for the audit trail), should this attempt fail.
    let lockout: SignInLockout | undefined =
      failures === Math.max(1, config.signInFreeFailures) ? 'sign_in_delay' : undefined
    if (perAccount === config.signInAccountLimit) lockout = 'sign_in_account'
    const accountKeys = counters.slice(1).map((c) => c.key)
    return {
      lockout,
      succeeded: () => store.delete(counters[0]!.key, gate).then(() => store.release(...accountKeys)),
      abandoned: async () => {
        await store.release(...counters.map((c) => c.key))
        if (failures! >= from) await store.delete(gate)
      },
    }
  }

  return {
    /** The account an email names, for keys and for binding known-device cookies. */
    accountOf(email: string): string {
      return createHmac('sha256', key).update(`sign-in:${email.trim().toLowerCase()}`).digest('base64url')
    },

    /**
     * Runs one password check (`check`, which answers whether the password was right, with what it
     * made) under the throttle: held back without running it, or run with the attempt reserved
     * first and settled by its outcome. Every path that verifies a password goes through here.
     */
    async attempt<T>(
      account: string,
      client: SignInClient,
      check: () => Promise<{ ok: boolean; value: T }>,
    ): Promise<Throttled<T>> {
      if (!config.rateLimits) return { result: (await check()).value }
      const reservation = await reserve(account, client)
      if ('held' in reservation) return { held: reservation.held }
      let outcome: { ok: boolean; value: T }
      try {
        outcome = await check()
      } catch (err) {
        await reservation.abandoned()
        throw err
      }
      if (outcome.ok) {
        await reservation.succeeded()
        return { result: outcome.value }
      }
      return { result: outcome.value, ...(reservation.lockout ? { lockout: reservation.lockout } : {}) }
    },
  }
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>
