import type { FastifyReply } from 'fastify'
import { retryAfterSeconds } from '../errors.js'
import type { SignInHold } from './sign-in-throttle.service.js'

/**
 * A password check the sign-in throttle held back (sign-in, password change, passkey confirmation):
 * counted on linkauth_rate_limited_total, `Retry-After` set; answers the seconds to wait, which the
 * route's page shows with its 429.
 */
export function answerHeldBack(
  reply: FastifyReply,
  rateLimited: { inc(labels: { limit: string }): void },
  held: SignInHold,
): number {
  rateLimited.inc({ limit: held.limit })
  const wait = retryAfterSeconds(held.retryAfterMs)
  reply.header('retry-after', String(wait))
  return wait
}
