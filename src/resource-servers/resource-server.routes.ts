import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { parseOrProblem } from '../input/parse-or-problem.js'
import {
  type ResourceForgotten,
  type ResourceServer,
  type ResourceServerService,
} from './resource-server.service.js'
import {
  newResourceServerSchema,
  resourceServerUpdateSchema,
  secretRotationSchema,
} from './resource-server.schemas.js'

const describeServer = (s: ResourceServer) => ({
  id: s.id,
  name: s.name,
  resource: s.resource,
  scopes: s.scopes,
  created_at: s.createdAt.toISOString(),
  disabled_at: s.disabledAt?.toISOString() ?? null,
  previous_secret_expires_at: s.previousSecretExpiresAt?.toISOString() ?? null,
})

const describeForgotten = (f: ResourceForgotten | undefined) => ({
  refresh_families_revoked: f?.familiesRevoked ?? 0,
  grants_narrowed: f?.grantsNarrowed ?? 0,
  codes_expired: f?.codesExpired ?? 0,
})

const idParams = z.object({ id: z.string().max(64) })

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface ResourceServerAdminServices {
  resourceServers: ResourceServerService
}

/**
 * Admin API: resource servers (introspection and event-feed credentials): register, list, show,
 * update, disable, enable, delete, and rotate the secret (shown once, like at registration).
 */
export function resourceServerAdminRoutes(services: ResourceServerAdminServices) {
  return async (app: FastifyInstance) => {
    const servers = services.resourceServers
    app.post('/admin/resource-servers', async (request, reply) => {
      const input = parseOrProblem(newResourceServerSchema, request.body)
      const server = await servers.createResourceServer(input, request)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...describeServer(server), secret: server.secret })
    })
    app.get('/admin/resource-servers', async () => ({
      resource_servers: (await servers.listResourceServers()).map(describeServer),
    }))
    app.get('/admin/resource-servers/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return describeServer(await servers.getResourceServer(id))
    })
    app.patch('/admin/resource-servers/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      const patch = parseOrProblem(resourceServerUpdateSchema, request.body)
      return describeServer(await servers.updateResourceServer(id, patch, request))
    })
    app.post('/admin/resource-servers/:id/disable', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return describeServer(await servers.disableResourceServer(id, request))
    })
    app.post('/admin/resource-servers/:id/enable', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      return describeServer(await servers.enableResourceServer(id, request))
    })
    app.delete('/admin/resource-servers/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      const { server, forgotten } = await servers.deleteResourceServer(id, request)
      return { ...describeServer(server), deleted: describeForgotten(forgotten) }
    })
    app.post('/admin/resource-servers/:id/secret', async (request, reply) => {
      const { id } = parseOrProblem(idParams, request.params)
      const { overlap_seconds } = parseOrProblem(secretRotationSchema, request.body)
      const server = await servers.rotateSecret(id, overlap_seconds, request)
      return reply
        .header('cache-control', 'no-store')
        .send({ ...describeServer(server), secret: server.secret })
    })
  }
}
