import type { FastifyInstance } from 'fastify'
import type { HealthService } from './health.service.js'

/** Probes come every few seconds: their request lines at info would bury everything else. */
const quiet = { logLevel: 'warn' } as const

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface HealthRouteServices {
  health: HealthService
}

export function healthRoutes(services: HealthRouteServices) {
  return async (app: FastifyInstance) => {
    app.get('/healthz', quiet, async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'ok' }
    })
    app.get('/readyz', quiet, async (_request, reply) => {
      const readiness = await services.health.readiness()
      reply.header('cache-control', 'no-store').code(readiness.ready ? 200 : 503)
      // Like every other 503 of ours: the database is expected back, ask again in a few seconds.
      if (!readiness.ready) reply.header('retry-after', '5')
      return readiness.ready ? { status: 'ready' } : { status: 'unavailable', reason: readiness.reason }
    })
  }
}
