import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { newResourceServerSchema } from './resource-server.service.js'

/** Admin API: register resource servers (introspection credentials; the secret is shown once). */
export function resourceServerAdminRoutes(services: Pick<Services, 'resourceServers'>) {
  return async (app: FastifyInstance) => {
    app.post('/admin/resource-servers', async (request, reply) => {
      const input = parseOrProblem(newResourceServerSchema, request.body)
      const server = await services.resourceServers.createResourceServer(input)
      return reply.code(201).header('cache-control', 'no-store').send({
        id: server.id,
        name: server.name,
        secret: server.secret,
        created_at: server.createdAt.toISOString(),
      })
    })
    app.get('/admin/resource-servers', async () => ({
      resource_servers: (await services.resourceServers.listResourceServers()).map((s) => ({
        id: s.id,
        name: s.name,
        created_at: s.createdAt.toISOString(),
      })),
    }))
  }
}
