import type { Socket } from 'node:net'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { statusTitle } from './errors.js'
import type { AppDeps } from './services.js'
import { errorHandling, sendError } from './web/error-handler.js'
import { SECURITY_HEADERS, securityHeaders, setSecurityHeaders } from './web/security-headers.js'

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
    clientErrorHandler: answerUnparsableRequest,
  })
  await errorHandling(app)
  await securityHeaders(app)
  return app
}

/**
 * A request Node's HTTP parser refused (malformed, headers too large, too slow) never becomes a
 * Fastify request: it is answered here, on the socket, as problem details with the same security
 * headers as every other answer, and the connection is closed.
 */
function answerUnparsableRequest(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  const body = JSON.stringify({ type: 'about:blank', title: statusTitle(status), status })
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    connection: 'close',
  }
  if (socket.writable) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
    socket.write(`HTTP/1.1 ${status} ${statusTitle(status)}\r\n${lines.join('')}\r\n${body}`)
  }
  socket.destroy(error)
}
