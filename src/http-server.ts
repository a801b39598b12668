import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { Logger } from 'pino'
import type { Config } from './config.js'
import { statusTitle } from './errors.js'
import { errorHandling, sendError } from './web/error-handler.js'
import { assertParameterLimits, parseParameters } from './input/parameters.js'
import { trackAllowedMethods } from './web/allowed-methods.js'
import { RequestLines } from './web/request-lines.js'
import { waitForRunningHandlersOnClose } from './web/running-handlers.js'
import { useBrand } from './web/brand.js'
import { SECURITY_HEADERS, securityHeaders, setSecurityHeaders } from './web/security-headers.js'

/** How the router matches paths: Fastify's, and the one that tells 405 from 404 (allowed-methods.ts). */
const ROUTER_MATCHING = { maxParamLength: 200, ignoreTrailingSlash: false }

/** What the server is built from: its limits and its logger (the rest of AppDeps is the apps'). */
export interface HttpServerDeps {
  config: Readonly<
    Pick<
      Config,
      | 'headersTimeout'
      | 'trustProxy'
      | 'bodyLimit'
      | 'requestTimeout'
      | 'keepAliveTimeout'
      | 'maxHeaderSize'
      | 'brand'
    >
  >
  logger: Logger
}

/**
 * The Fastify instance both listeners start from: limits, logging, error answers, security headers,
 * the brand its pages show.
 * A slow client cannot hold a connection: its headers must arrive within HEADERS_TIMEOUT (a
 * slowloris is cut off there), the whole request within REQUEST_TIMEOUT, and an idle keep-alive
 * connection closes after KEEP_ALIVE_TIMEOUT. Headers above MAX_HEADER_SIZE get 431 from Node.
 */
export async function createHttpServer(deps: HttpServerDeps): Promise<FastifyInstance> {
  const { config } = deps
  const headersTimeout = config.headersTimeout * 1000
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Routes may log their request lines at debug (config.requestLines: the revocation feed's polls).
    logController: new RequestLines(),
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
    routerOptions: { ...ROUTER_MATCHING, querystringParser: parseParameters },
    // A path the router refuses before any hook runs (bad percent-encoding, an over-long parameter)
    // is answered like every other error: the path's own error style and the security headers.
    frameworkErrors: (error, request, reply) => {
      setSecurityHeaders(reply)
      return sendError(error, request, reply)
    },
    clientErrorHandler: answerUnparsableRequest,
    // The `reqId` of log lines and the request id of audit events: unique across listeners and
    // instances (Fastify's default, req-1, req-2…, starts again in every process).
    genReqId: () => randomUUID(),
  })
  waitForRunningHandlersOnClose(app)
  app.addHook('preValidation', assertParameterLimits)
  await errorHandling(app, trackAllowedMethods(app, ROUTER_MATCHING))
  await securityHeaders(app)
  useBrand(app, config.brand)
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
