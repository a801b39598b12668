import { z } from 'zod'
import { badInput, isoTime, jsonBody, noAdminToken, ok, type Operations } from '../openapi/describe.js'
import { newResourceServerSchema } from './resource-server.service.js'

export const resourceServerSchema = z.object({ id: z.string(), name: z.string(), created_at: isoTime })
export const createdResourceServerSchema = resourceServerSchema.extend({
  secret: z.string().meta({ description: 'The introspection password. Shown only in this answer.' }),
})
export const resourceServerListSchema = z.object({ resource_servers: z.array(resourceServerSchema) })

export const resourceServerAdminOperations: Operations = {
  '/admin/resource-servers': {
    post: {
      operationId: 'createResourceServer',
      summary: 'Register a resource server: introspection credentials.',
      requestBody: jsonBody(newResourceServerSchema),
      responses: {
        '201': ok('The id and the secret (shown only here).', createdResourceServerSchema),
        '400': badInput,
        '401': noAdminToken,
      },
    },
    get: {
      operationId: 'listResourceServers',
      summary: 'List the resource servers (never their secrets).',
      responses: {
        '200': ok('Every resource server, without secrets.', resourceServerListSchema),
        '401': noAdminToken,
      },
    },
  },
}
