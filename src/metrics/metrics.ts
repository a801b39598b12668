import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** Pool figures of the PostgreSQL connection pool (absent on PGlite). */
export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/**
 * Every metric linkauth exports, in a registry of its own (not prom-client's global one), so each
 * app built in a test has its own counts.
 */
export function createMetrics(
  options: { poolStats?: () => PoolStats; heldPolls?: () => number; processMetrics?: boolean } = {},
) {
  const registry = new Registry()
  if (options.processMetrics) collectDefaultMetrics({ register: registry, prefix: 'linkauth_' })
  const metrics = {
    registry,
    httpRequests: new Counter({
      name: 'linkauth_http_requests_total',
      help: 'HTTP requests answered, by listener, route and status code',
      labelNames: ['listener', 'method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'linkauth_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by listener, route and status code',
      labelNames: ['listener', 'method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    tokensIssued: new Counter({
      name: 'linkauth_tokens_issued_total',
      help: 'Token responses issued by the token endpoint, by grant type',
      labelNames: ['grant_type'] as const,
      registers: [registry],
    }),
    refreshTokenReuse: new Counter({
      name: 'linkauth_refresh_token_reuse_total',
      help: 'Rotated refresh tokens presented again after REFRESH_REUSE_WINDOW (the family is revoked: a theft signal)',
      registers: [registry],
    }),
    refreshTokenRetries: new Counter({
      name: 'linkauth_refresh_token_retries_total',
      help: 'Rotated refresh tokens presented again by their client inside REFRESH_REUSE_WINDOW: answered, or refused past the bound',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    clientRegistrations: new Counter({
      name: 'linkauth_client_registrations_total',
      help: 'Dynamic client registrations (RFC 7591): registered, or removed (by their own request or as unused)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    codeReplays: new Counter({
      name: 'linkauth_authorization_code_replays_total',
      help: 'Authorization codes presented after they were used (what they issued is revoked)',
      registers: [registry],
    }),
    revocations: new Counter({
      name: 'linkauth_revocations_total',
      help: 'Revocations, by what was revoked (grant, refresh_family, access_token)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    passwordChecks: new Counter({
      name: 'linkauth_password_checks_total',
      help: 'Passwords verified with argon2 (sign-in and the current password of a change); held-back attempts are not',
      registers: [registry],
    }),
    signInFailures: new Counter({
      name: 'linkauth_sign_in_failures_total',
      help: 'Sign-in attempts refused for a wrong email or password',
      registers: [registry],
    }),
    passkeySignIns: new Counter({
      name: 'linkauth_passkey_sign_ins_total',
      help: 'Sign-ins completed with a passkey',
      registers: [registry],
    }),
    passkeyFailures: new Counter({
      name: 'linkauth_passkey_failures_total',
      help: 'Passkey ceremonies refused, by ceremony (sign_in, register, reauthenticate, reset) and reason',
      labelNames: ['ceremony', 'reason'] as const,
      registers: [registry],
    }),
    securityEventsDelivered: new Counter({
      name: 'linkauth_security_events_delivered_total',
      help: 'Revocation events handed to resource servers as SETs (redeliveries included)',
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'linkauth_rate_limited_total',
      help: 'Requests refused with 429 by a rate limit, by limit',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    rateLimitStoreErrors: new Counter({
      name: 'linkauth_rate_limit_store_errors_total',
      help: 'Rate-limit operations Redis could not answer (counted in this process instead)',
      registers: [registry],
    }),
    housekeepingDeleted: new Counter({
      name: 'linkauth_housekeeping_deleted_rows_total',
      help: 'Expired rows deleted by housekeeping, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    housekeepingDuration: new Histogram({
      name: 'linkauth_housekeeping_run_duration_seconds',
      help: 'Time a housekeeping run took, by outcome (completed, busy, stopped, failed)',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
  }
  const { poolStats } = options
  if (poolStats) {
    new Gauge({
      name: 'linkauth_db_pool_connections',
      help: 'PostgreSQL pool connections, by state (total, idle, waiting clients)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const stats = poolStats()
        this.set({ state: 'total' }, stats.total)
        this.set({ state: 'idle' }, stats.idle)
        this.set({ state: 'waiting' }, stats.waiting)
      },
    })
  }
  const { heldPolls } = options
  if (heldPolls) {
    new Gauge({
      name: 'linkauth_event_polls_waiting',
      help: 'Revocation-feed polls held open or about to wait for an event',
      registers: [registry],
      collect() {
        this.set(heldPolls())
      },
    })
  }
  return metrics
}

export type Metrics = ReturnType<typeof createMetrics>
