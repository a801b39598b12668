import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'

export function healthRoutes(services: Pick<Services, 'health'>) {
  return async (app: FastifyInstance) => {
    app.get('/healthz', async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return { status: 'ok' }
    })
    app.get('/readyz', async (_request, reply) => {
      const readiness = await services.health.readiness()
      reply.header('cache-control', 'no-store').code(readiness.ready ? 200 : 503)
      // Like every other 503 of ours: the database is expected back, ask again in a few seconds.
      if (!readiness.ready) reply.header('retry-after', '5')
      return readiness.ready ? { status: 'ready' } : { status: 'unavailable', reason: readiness.reason }
    })
  }
}
