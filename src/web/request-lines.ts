import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `debug`: the route's "incoming request" and "request completed" lines are logged at debug,
     * not info (a long-poll answers every few seconds for as long as a resource server runs); a
     * request that errors is still logged at error, and the route's own warnings stay as they are.
     */
    requestLines?: 'debug'
  }
}

const atDebug = (request: FastifyRequest) => request.routeOptions?.config?.requestLines === 'debug'

/** Fastify's request lines, at debug for the routes that ask for it (`config.requestLines`). */
export class RequestLines extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!atDebug(request)) return super.incomingRequest(request, reply)
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error || !atDebug(request)) return super.requestCompleted(error, request, reply)
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
