import type { FastifyInstance } from 'fastify'
import type { AuditRecorder } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import { constantTimeEqual } from '../lib/secrets.js'

/** Requires `Authorization: Bearer <ADMIN_TOKEN>` on every route of the instance it is registered on. */
export function requireAdminToken(
  app: FastifyInstance,
  adminToken: string,
  audit?: Pick<AuditRecorder, 'recordRefusal'>,
): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization ?? ''
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(header)
    if (!match || !constantTimeEqual(match[1]!, adminToken)) {
      reply.header('www-authenticate', 'Bearer realm="linkauth-admin"')
      // Recorded without what was sent: a wrong token may be a near-miss of the right one.
      await audit?.recordRefusal({
        type: 'admin.unauthorized',
        from: request,
        actor: { kind: 'anonymous' },
        target: { kind: 'admin_api' },
        details: {
          method: request.method,
          path: request.routeOptions.url ?? 'unrouted',
          sent: match ? 'wrong_token' : header ? 'malformed' : 'none',
        },
      })
      throw new ProblemError(401, 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>).')
    }
  })
}
