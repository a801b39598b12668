import { z } from 'zod'
import {
  badInput,
  idParameter,
  isoTime,
  jsonBody,
  noAdminToken,
  ok,
  type Operations,
  problem,
} from '../openapi/describe.js'
import { newClientSchema } from './client.service.js'

export const clientSchema = z.object({
  client_id: z.string(),
  name: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()),
  created_at: isoTime,
  disabled_at: isoTime.nullable(),
})
export const clientListSchema = z.object({ clients: z.array(clientSchema) })

const clientId = idParameter('The client_id.')
const noSuchClient = problem('No such client.')

export const clientAdminOperations: Operations = {
  '/admin/clients': {
    post: {
      operationId: 'createClient',
      summary: 'Register a client application.',
      requestBody: jsonBody(newClientSchema),
      responses: { '201': ok('The client.', clientSchema), '400': badInput, '401': noAdminToken },
    },
    get: {
      operationId: 'listClients',
      summary: 'List every client, disabled ones included.',
      responses: {
        '200': ok('Every client, disabled ones included.', clientListSchema),
        '401': noAdminToken,
      },
    },
  },
  '/admin/clients/{id}': {
    get: {
      operationId: 'getClient',
      summary: 'Show one client.',
      parameters: [clientId],
      responses: { '200': ok('The client.', clientSchema), '401': noAdminToken, '404': noSuchClient },
    },
    delete: {
      operationId: 'disableClient',
      summary: 'Disable a client and revoke all its grants and tokens.',
      parameters: [clientId],
      responses: {
        '200': ok('The client, with disabled_at set.', clientSchema),
        '401': noAdminToken,
        '404': noSuchClient,
      },
    },
  },
}
