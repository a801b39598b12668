import type { FastifyInstance } from 'fastify'
import { type QueryExecutorProvider, sql } from 'kysely'
import type { ResourceVerifier } from '@linkauth/resource'

/** Liveness, and readiness with how tokens are verified right now (local, fallback or introspection) and the verifier's counters. */
export function healthRoutes(db: QueryExecutorProvider, verifier: ResourceVerifier) {
  return async (app: FastifyInstance) => {
    app.get('/healthz', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'ok' }
    })
    app.get('/readyz', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      const { mode, feedConnected } = verifier.status()
      const { introspectionCalls, jwksFetches, feedEventsReceived } = verifier.stats()
      const verification = {
        mode,
        feed_connected: feedConnected,
        introspection_calls: introspectionCalls,
        jwks_fetches: jwksFetches,
        feed_events_received: feedEventsReceived,
      }
      try {
        await sql`select 1`.execute(db)
      } catch {
        return reply.code(503).send({ status: 'unavailable', reason: 'database_unavailable', verification })
      }
      return { status: 'ready', verification }
    })
  }
}
