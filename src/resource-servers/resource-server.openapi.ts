import { z } from 'zod'
import {
  badInput,
  idParameter,
  isoTime,
  jsonBody,
  noAdminToken,
  ok,
  problem,
  type Operations,
} from '../openapi/describe.js'
import {
  newResourceServerSchema,
  resourceServerUpdateSchema,
  secretRotationSchema,
} from './resource-server.schemas.js'

export const resourceServerSchema = z.object({
  id: z.string(),
  name: z.string(),
  resource: z.string().nullable().meta({
    description: 'The resource identifier (RFC 8707); null: registered without one, default audience.',
  }),
  scopes: z.array(z.string()).meta({ description: 'The scopes this API serves (empty without resource).' }),
  created_at: isoTime,
  disabled_at: isoTime.nullable().meta({ description: 'Set while disabled: its calls get 401.' }),
  previous_secret_expires_at: isoTime.nullable().meta({
    description:
      'Until when the secret replaced by the last rotation still works; null: only the current one.',
  }),
})
export const createdResourceServerSchema = resourceServerSchema.extend({
  secret: z.string().meta({ description: 'The introspection password. Shown only in this answer.' }),
})
export const resourceServerListSchema = z.object({ resource_servers: z.array(resourceServerSchema) })
export const deletedResourceServerSchema = resourceServerSchema.extend({
  deleted: z.object({
    refresh_families_revoked: z.number().int().meta({
      description:
        'Refresh-token families whose authorization named its resource: revoked, with their access tokens.',
    }),
    grants_narrowed: z.number().int().meta({ description: 'Live grants that no longer name its resource.' }),
    codes_expired: z.number().int().meta({ description: 'Unredeemed codes for its resource, expired.' }),
  }),
})

const serverId = idParameter('The resource server id (rs_…).')
const noSuchServer = problem('No such resource server.')
const oneServer = (description: string) => ({
  '200': ok(description, resourceServerSchema),
  '401': noAdminToken,
  '404': noSuchServer,
})

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
  '/admin/resource-servers/{id}': {
    get: {
      operationId: 'getResourceServer',
      summary: 'Show one resource server (never its secret).',
      parameters: [serverId],
      responses: oneServer('The resource server.'),
    },
    patch: {
      operationId: 'updateResourceServer',
      summary: 'Rename a resource server or change the scopes it serves (only the fields given).',
      parameters: [serverId],
      requestBody: jsonBody(resourceServerUpdateSchema),
      responses: { ...oneServer('The resource server as it now is.'), '400': badInput },
    },
    delete: {
      operationId: 'deleteResourceServer',
      summary:
        'Delete a resource server. Refresh-token families whose authorization named its resource are revoked (announced on the revocation feed) and grants forget the resource.',
      parameters: [serverId],
      responses: {
        '200': ok('What was deleted, and what it did to grants.', deletedResourceServerSchema),
        '401': noAdminToken,
        '404': noSuchServer,
      },
    },
  },
  '/admin/resource-servers/{id}/disable': {
    post: {
      operationId: 'disableResourceServer',
      summary:
        'Disable a resource server: introspection and the event feed answer it 401, and no token is issued for its resource.',
      parameters: [serverId],
      responses: oneServer('The resource server, with disabled_at set.'),
    },
  },
  '/admin/resource-servers/{id}/enable': {
    post: {
      operationId: 'enableResourceServer',
      summary: 'Enable a disabled resource server again.',
      parameters: [serverId],
      responses: oneServer('The resource server, with disabled_at null.'),
    },
  },
  '/admin/resource-servers/{id}/secret': {
    post: {
      operationId: 'rotateResourceServerSecret',
      summary:
        'Give a resource server a new secret (shown only in this answer); the old one keeps working for overlap_seconds (default 3600).',
      parameters: [serverId],
      requestBody: jsonBody(secretRotationSchema, false),
      responses: {
        '200': ok('The resource server and its new secret (shown only here).', createdResourceServerSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': noSuchServer,
      },
    },
  },
}
