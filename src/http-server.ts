import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { AppDeps } from './services.js'
import { errorHandling, sendError } from './web/error-handler.js'
import { securityHeaders, setSecurityHeaders } from './web/security-headers.js'

/** The Fastify instance both listeners start from: limits, logging, error answers, security headers. */
export async function createHttpServer(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    trustProxy: deps.config.trustProxy,
    bodyLimit: 64 * 1024,
    // A slow client cannot hold a connection: whole request in 30 s, idle keep-alive 5 s.
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    connectionTimeout: 60_000,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: false },
    // A path the router refuses before any hook runs (bad percent-encoding, an over-long parameter)
    // is answered like every other error: the path's own error style and the security headers.
    frameworkErrors: (error, request, reply) => {
      setSecurityHeaders(reply)
      return sendError(error, request, reply)
    },
  })
  await errorHandling(app)
  await securityHeaders(app)
  return app
}
