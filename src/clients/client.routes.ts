import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Services } from '../services.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { type Client, newClientSchema } from './client.service.js'

export function clientJson(client: Client) {
  return {
    client_id: client.id,
    name: client.name,
    redirect_uris: client.redirectUris,
    scopes: client.scopes,
    created_at: client.createdAt.toISOString(),
    disabled_at: client.disabledAt?.toISOString() ?? null,
  }
}

const idParams = z.object({ id: z.string().max(64) })

/** Admin API: register, list, show and disable client applications. */
export function clientAdminRoutes(services: Pick<Services, 'clients'>) {
  return async (app: FastifyInstance) => {
    app.post('/admin/clients', async (request, reply) => {
      const input = parseOrProblem(newClientSchema, request.body)
      const client = await services.clients.createClient(input)
      return reply.code(201).send(clientJson(client))
    })
    app.get('/admin/clients', async () => ({
      clients: (await services.clients.listClients()).map(clientJson),
    }))
    app.get('/admin/clients/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.getClient(id))
    })
    app.delete('/admin/clients/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return clientJson(await services.clients.disableClient(id))
    })
  }
}
