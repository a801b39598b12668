import { createHmac } from 'node:crypto'
import type { Config } from '../config.js'
import type { CounterStore } from '../rate-limit/counter-store.js'

/**
 * Who is trying: a browser that signed in to this account before (its known-device id), or else
 * the client's address. A known device is never held back by what other clients do.
 */
export type SignInClient = { device: string } | { address: string }

export type SignInDecision = { allowed: true } | { allowed: false; limit: string; retryAfterMs: number }

/** Which hold a failure started: the per-client delay, or the per-account limit. */
export type SignInLockout = 'sign_in_delay' | 'sign_in_account'

const ALLOWED: SignInDecision = { allowed: true }

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
 * Attempts held back are refused before the password is checked, so they cost no argon2 work.
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

  return {
    /** The account an email names, for keys and for binding known-device cookies. */
    accountOf(email: string): string {
      return createHmac('sha256', key).update(`sign-in:${email.trim().toLowerCase()}`).digest('base64url')
    },

    async check(account: string, client: SignInClient): Promise<SignInDecision> {
      if (!config.rateLimits) return ALLOWED
      const delay = await store.peek(`sign-in-delay:${clientKey(account, client)}`)
      if (delay.count > 0) return { allowed: false, limit: 'sign_in_delay', retryAfterMs: delay.resetInMs }
      if ('device' in client) return ALLOWED
      const failures = await store.peek(`sign-in-account:${account}`)
      if (failures.count >= config.signInAccountLimit)
        return { allowed: false, limit: 'sign_in_account', retryAfterMs: failures.resetInMs }
      return ALLOWED
    },

    /**
     * Counts a failure. Answers the limit that this very failure started holding the client or the
     * account back under (the moment of a lockout, for the audit trail), else undefined.
     */
    async failed(account: string, client: SignInClient): Promise<SignInLockout | undefined> {
      if (!config.rateLimits) return undefined
      const id = clientKey(account, client)
      const { count } = await store.increment(`sign-in-failures:${id}`, config.signInFailureTtl * 1000, true)
      if (count >= config.signInFreeFailures) await store.hold(`sign-in-delay:${id}`, delayMs(count))
      let lockout: SignInLockout | undefined =
        count === Math.max(1, config.signInFreeFailures) ? 'sign_in_delay' : undefined
      if (!('device' in client)) {
        const perAccount = await store.increment(
          `sign-in-account:${account}`,
          config.signInAccountWindow * 1000,
        )
        if (perAccount.count === config.signInAccountLimit) lockout = 'sign_in_account'
      }
      return lockout
    },

    async succeeded(account: string, client: SignInClient): Promise<void> {
      if (!config.rateLimits) return
      const id = clientKey(account, client)
      await store.delete(`sign-in-failures:${id}`, `sign-in-delay:${id}`)
    },
  }
}

export type SignInThrottle = ReturnType<typeof createSignInThrottle>
