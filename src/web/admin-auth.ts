import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../errors.js'
import { constantTimeEqual } from '../lib/secrets.js'

/** Requires `Authorization: Bearer <ADMIN_TOKEN>` on every route of the instance it is registered on. */
export function requireAdminToken(app: FastifyInstance, adminToken: string): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.authorization ?? ''
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(header)
    if (!match || !constantTimeEqual(match[1]!, adminToken)) {
      reply.header('www-authenticate', 'Bearer realm="linkauth-admin"')
      throw new ProblemError(401, 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>).')
    }
  })
}
