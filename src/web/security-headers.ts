import type { FastifyInstance } from 'fastify'

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

/** DESIGN §5: every answer carries these, pages and APIs alike. */
export async function securityHeaders(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', CSP)
    reply.header('x-frame-options', 'DENY')
    reply.header('referrer-policy', 'no-referrer')
    reply.header('x-content-type-options', 'nosniff')
    reply.header('cross-origin-opener-policy', 'same-origin')
  })
}
