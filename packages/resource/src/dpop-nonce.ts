/**
 * The server nonces of DPoP (RFC 9449 §9) that the instances of one resource API share: optional;
 * without them an API asks for no nonce. A proof's nonce is checked by the predicate the caller
 * hands verifyDpopProof (`nonce: (n) => source.accepts(n)`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Where a resource API's nonces come from: the one to hand out now, and whether a proof's is good. */
export interface DpopNonceSource {
  current(): string
  accepts(nonce: string): boolean
}

export interface DpopNonceOptions {
  /** At least 32 bytes, the same on every instance of the API; never sent anywhere. */
  secret: string | Uint8Array
  /** A nonce is handed out for this long and accepted for twice as long (default 300 s). */
  periodSeconds?: number
  /** Epoch seconds now (tests move it); default the system clock. */
  now?: () => number
}

/**
 * Nonces every instance can make and check without talking to the others: the time step and an
 * HMAC of it under a shared secret. One handed out in the current step is accepted in that step and
 * the next, so a client that just got one never meets a refusal at a step boundary.
 */
export function createDpopNonceSource(options: DpopNonceOptions): DpopNonceSource {
  const secret = typeof options.secret === 'string' ? Buffer.from(options.secret) : options.secret
  if (secret.length < 32) throw new TypeError('the DPoP nonce secret must be at least 32 bytes')
  const period = options.periodSeconds ?? 300
  if (!Number.isSafeInteger(period) || period < 1)
    throw new TypeError('periodSeconds must be a whole number of seconds >= 1')
  const clock = options.now ?? (() => Date.now() / 1000)
  const mac = (step: number) =>
    createHmac('sha256', secret).update(`dpop-nonce:${step}`).digest().subarray(0, 24)
  const nonceOf = (step: number) => `${step.toString(36)}.${mac(step).toString('base64url')}`
  const NONCE = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{32})$/

  return {
    current: () => nonceOf(Math.floor(clock() / period)),
    accepts(nonce) {
      const match = NONCE.exec(nonce)
      if (!match) return false
      const step = parseInt(match[1]!, 36)
      const now = Math.floor(clock() / period)
      if (step !== now && step !== now - 1) return false
      return timingSafeEqual(Buffer.from(match[2]!, 'base64url'), mac(step))
    },
  }
}
