/**
 * What the instances of one resource API share for DPoP (RFC 9449): the server nonces they hand out
 * (§9) and the store of proof `jti`s they have accepted (§11.1). Both are optional: without them a
 * single instance keeps its jtis in memory and asks for no nonce. (This file imports nothing of
 * dpop.ts, which re-exports it: the store it makes is a `DpopReplayStore` by shape.)
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

/** The one Redis command the store needs, as ioredis and node-redis v4 (legacy mode) type it. */
export interface RedisSetNx {
  set(key: string, value: string, expiry: 'EXAT', at: number, flag: 'NX'): Promise<unknown>
}

/**
 * A replay store in Redis (6.2 or newer, for EXAT), shared by every instance of the API: `SET key 1
 * EXAT <expiry> NX` is atomic, so of two instances seeing one proof only one accepts it.
 */
export function createRedisReplayStore(
  redis: RedisSetNx,
  prefix = 'dpop-jti:',
): { remember(key: string, expiresAt: number): Promise<boolean> } {
  return {
    async remember(key, expiresAt) {
      return (await redis.set(`${prefix}${key}`, '1', 'EXAT', Math.ceil(expiresAt), 'NX')) === 'OK'
    },
  }
}
