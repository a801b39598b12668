import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { parseOrProblem } from '../input/parse-or-problem.js'
import type { ClientService } from './client.service.js'

export const blockClientSchema = z.strictObject({
  client_id: z.string('a client_id URL').max(2000, 'at most 2000 characters'),
  reason: z
    .string('plain text')
    .trim()
    .min(1, 'must not be empty')
    .max(300, 'at most 300 characters')
    .optional()
    .meta({
      description: 'Why, for the operator who reads the list later (plain text, at most 300 characters).',
    }),
})

const clientIdQuery = z.object({ client_id: z.string('a client_id URL').max(2000) })

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface BlockedClientServices {
  clients: ClientService
}

/**
 * Admin API: the block list of client_id URLs (Client ID Metadata Documents). A blocked URL is
 * refused at the authorization endpoint, its row disabled and its grants revoked; whatever its
 * document says later, it stays blocked until the operator takes it off the list.
 */
export function blockedClientAdminRoutes(services: BlockedClientServices) {
  return async (app: FastifyInstance) => {
    app.post('/admin/blocked-clients', async (request, reply) => {
      const input = parseOrProblem(blockClientSchema, request.body)
      const { created } = await services.clients.blockClientId(input.client_id, input.reason ?? null, request)
      return reply.code(created ? 201 : 200).send({ client_id: input.client_id, blocked: true })
    })
    app.get('/admin/blocked-clients', async () => ({
      blocked: (await services.clients.listBlockedClientIds()).map((entry) => ({
        client_id: entry.clientId,
        reason: entry.reason,
        blocked_at: entry.blockedAt.toISOString(),
      })),
    }))
    app.delete('/admin/blocked-clients', async (request, reply) => {
      const { client_id } = parseOrProblem(clientIdQuery, request.query)
      await services.clients.unblockClientId(client_id, request)
      return reply.code(204).send()
    })
  }
}
