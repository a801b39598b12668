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
      return readiness.ready ? { status: 'ready' } : { status: 'unavailable', reason: readiness.reason }
    })
  }
}
