import type { FastifyInstance } from 'fastify'
import type { AuditRecorder } from '../audit/audit.service.js'
import type { Config } from '../config.js'
import { ProblemError, RateLimitedError } from '../errors.js'
import { constantTimeEqual } from '../lib/secrets.js'
import type { Metrics } from '../metrics/metrics.js'
import { clientAddress } from '../rate-limit/client-address.js'
import type { CounterStore } from '../rate-limit/counter-store.js'

const MINUTE = 60_000

/** What the admin token check counts failures in, and how many it lets an address have. */
export interface AdminAuthLimit {
  store: CounterStore
  metrics: Pick<Metrics, 'rateLimited'>
  config: Pick<Config, 'rateLimits' | 'adminAuthFailureLimit'>
}

/**
 * Requires `Authorization: Bearer <ADMIN_TOKEN>` on every route of the instance it is registered on.
 *
 * Failures are limited per address: each request reserves one of the address's
 * ADMIN_AUTH_FAILURE_LIMIT failures a minute (atomically, before the token is compared, so parallel
 * guesses cannot pass it) and gives it back when its token is right; once they are spent, every
 * request from the address is 429 until the minute ends, its token not even compared. The audit
 * trail gets the first failure of an address's minute and the one that spends its limit (with the
 * count), not one row per wrong token.
 */
export function requireAdminToken(
  app: FastifyInstance,
  adminToken: string,
  audit?: Pick<AuditRecorder, 'recordRefusal'>,
  limit?: AdminAuthLimit,
): void {
  const limited = limit?.config.rateLimits ? limit : undefined
  app.addHook('onRequest', async (request, reply) => {
    const key = `admin-auth-failures:${clientAddress(request)}`
    const reserved = await limited?.store.reserve({
      gate: `${key}:gate`,
      counters: [{ key, windowMs: MINUTE, max: limited.config.adminAuthFailureLimit }],
    })
    if (reserved && !reserved.reserved) {
      limited!.metrics.rateLimited.inc({ limit: 'admin_auth' })
      throw new RateLimitedError('admin_auth', reserved.resetInMs)
    }
    const header = request.headers.authorization ?? ''
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(header)
    if (match && constantTimeEqual(match[1]!, adminToken)) {
      if (reserved) await limited!.store.release(key)
      return
    }
    reply.header('www-authenticate', 'Bearer realm="linkauth-admin"')
    const failures = reserved?.counts[0] ?? 1
    const spent = failures === limited?.config.adminAuthFailureLimit
    if (failures === 1 || spent)
      // Recorded without what was sent: a wrong token may be a near-miss of the right one.
      await audit?.recordRefusal({
        type: 'admin.unauthorized',
        from: request,
        actor: { kind: 'anonymous' },
        target: { kind: 'admin_api' },
        details: {
          method: request.method,
          path: request.routeOptions.url ?? 'unrouted',
          sent: match ? 'wrong_token' : header ? 'malformed' : 'none',
          ...(spent ? { failures, limit: 'admin_auth' } : {}),
        },
      })
    throw new ProblemError(401, 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>).')
  })
}
