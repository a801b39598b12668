import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { AppDeps } from './services.js'
import { errorHandling } from './web/error-handler.js'
import { assertParameterLimits, parseParameters } from './web/parameters.js'
import { securityHeaders } from './web/security-headers.js'

/**
 * The Fastify instance both listeners start from: limits, logging, error answers, security headers.
 * A slow client cannot hold a connection: its headers must arrive within HEADERS_TIMEOUT (a
 * slowloris is cut off there), the whole request within REQUEST_TIMEOUT, and an idle keep-alive
 * connection closes after KEEP_ALIVE_TIMEOUT. Headers above MAX_HEADER_SIZE get 431 from Node.
 */
export async function createHttpServer(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps
  const headersTimeout = config.headersTimeout * 1000
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    requestTimeout: config.requestTimeout * 1000,
    keepAliveTimeout: config.keepAliveTimeout * 1000,
    // Idle socket (no bytes either way), a backstop behind the timeouts above.
    connectionTimeout: 60_000,
    http: {
      headersTimeout,
      maxHeaderSize: config.maxHeaderSize,
      // Node enforces headersTimeout and requestTimeout when it sweeps connections (every 30 s by
      // default, which would let a slowloris hang on up to 30 s longer): sweep often enough.
      connectionsCheckingInterval: Math.min(1000, headersTimeout / 2),
    },
    return503OnClosing: true,
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: false, querystringParser: parseParameters },
  })
  app.addHook('preValidation', assertParameterLimits)
  await errorHandling(app)
  await securityHeaders(app)
  return app
}
