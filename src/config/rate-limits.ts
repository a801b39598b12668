import { z } from 'zod'
import { booleanish, count, optionalString } from './fields.js'

/** Request rate limits per endpoint, and where their counts are kept (this process or Redis). */
export const rateLimitSchema = z.object({
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// URL')
      .optional(),
  ),
  /** Off only for benchmarks: no rate limit is registered at all. */
  RATE_LIMITS: booleanish('true'),
  /** Prefix of every rate-limit key in Redis, so deployments (and test runs) sharing a Redis do not collide. */
  RATE_LIMIT_REDIS_PREFIX: z.string().min(1).max(100).default('linkauth:rl:'),
  /** POST /login per client address per minute, every attempt counted. */
  SIGN_IN_RATE_LIMIT: count(30),
  /** Requests per minute: authorize per address; token and revocation per (client_id, address). */
  AUTHORIZE_RATE_LIMIT: count(60),
  TOKEN_RATE_LIMIT: count(120),
  REVOCATION_RATE_LIMIT: count(60),
  /** Introspection requests per (resource server, address) per minute. */
  INTROSPECTION_RATE_LIMIT: count(60_000),
  /** OAuth API requests per address per minute that name no client or fail client authentication. */
  UNIDENTIFIED_RATE_LIMIT: count(30),
  /** Admin API requests per address per minute that fail the admin token; then the address waits. */
  ADMIN_AUTH_FAILURE_LIMIT: count(10),
})
