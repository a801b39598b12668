import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { newResourceServerSchema, type ResourceServer } from './resource-server.service.js'

const describeServer = (s: ResourceServer) => ({
  id: s.id,
  name: s.name,
  resource: s.resource,
  scopes: s.scopes,
  created_at: s.createdAt.toISOString(),
})

/** Admin API: register resource servers (introspection credentials; the secret is shown once). */
export function resourceServerAdminRoutes(services: Pick<Services, 'resourceServers'>) {
  return async (app: FastifyInstance) => {
    app.post('/admin/resource-servers', async (request, reply) => {
      const input = parseOrProblem(newResourceServerSchema, request.body)
      const server = await services.resourceServers.createResourceServer(input)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...describeServer(server), secret: server.secret })
    })
    app.get('/admin/resource-servers', async () => ({
      resource_servers: (await services.resourceServers.listResourceServers()).map(describeServer),
    }))
  }
}
