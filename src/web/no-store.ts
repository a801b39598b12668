import type { FastifyInstance, FastifyReply } from 'fastify'

/** Marks an answer uncacheable (RFC 6749 §5.1; `pragma` for HTTP/1.0 caches). */
export function setNoStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
}

/**
 * Every answer of the route group uncacheable, errors included (the error handler keeps headers set
 * here): the endpoints that hand out or read tokens and security events.
 */
export function noStore(app: FastifyInstance): void {
  app.addHook('onRequest', async (_request, reply) => {
    setNoStore(reply)
  })
}
