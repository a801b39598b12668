import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../errors.js'
import { constantTimeEqual } from '../lib/secrets.js'
import type { Metrics } from './metrics.js'

/** Counts and times every answer of a listener, labelled by its route pattern (never the raw URL). */
export function recordHttpMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  listener: 'public' | 'admin',
): void {
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      listener,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    }
    metrics.httpRequests.inc(labels)
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000)
  })
}

export interface MetricsSource {
  text(): Promise<string>
  contentType: string
}

/**
 * GET /metrics in the Prometheus text format. With `token`, a scraper must send it as a bearer
 * token; without, the caller has been authenticated already (the admin listener's token).
 */
export function metricsRoute(source: MetricsSource, token?: string) {
  return async (app: FastifyInstance) => {
    app.get('/metrics', async (request, reply) => {
      const sent = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1]
      if (token !== undefined && (!sent || !constantTimeEqual(sent, token))) {
        reply.header('www-authenticate', 'Bearer realm="linkauth-metrics"')
        throw new ProblemError(401, 'A valid metrics token is required.')
      }
      return reply
        .header('cache-control', 'no-store')
        .type(source.contentType)
        .send(await source.text())
    })
  }
}
