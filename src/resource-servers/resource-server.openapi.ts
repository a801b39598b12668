import { z } from 'zod'
import {
  badInput,
  isoTime,
  jsonBody,
  noAdminToken,
  ok,
  problem,
  type Operations,
} from '../openapi/describe.js'
import { newResourceServerSchema } from './resource-server.service.js'

export const resourceServerSchema = z.object({
  id: z.string(),
  name: z.string(),
  resource: z.string().nullable().meta({
    description: 'The resource identifier (RFC 8707); null: registered without one, default audience.',
  }),
  scopes: z.array(z.string()).meta({ description: 'The scopes this API serves (empty without resource).' }),
  created_at: isoTime,
})
export const createdResourceServerSchema = resourceServerSchema.extend({
  secret: z.string().meta({ description: 'The introspection password. Shown only in this answer.' }),
})
export const resourceServerListSchema = z.object({ resource_servers: z.array(resourceServerSchema) })

export const resourceServerAdminOperations: Operations = {
  '/admin/resource-servers': {
    post: {
      operationId: 'createResourceServer',
      summary:
        'Register a resource server: introspection credentials, and its resource identifier and scopes.',
      requestBody: jsonBody(newResourceServerSchema),
      responses: {
        '201': ok('The resource server and its secret (shown only here).', createdResourceServerSchema),
        '400': badInput,
        '401': noAdminToken,
        '409': problem('Another resource server has this resource.'),
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
