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
import { newUserSchema } from './user.service.js'

export const userSchema = z.object({ id: z.string(), email: z.string(), created_at: isoTime })
export const userListSchema = z.object({ users: z.array(userSchema) })

export const userAdminOperations: Operations = {
  '/admin/users': {
    post: {
      operationId: 'createUser',
      summary: 'Create a user who can sign in with this email and password.',
      requestBody: jsonBody(newUserSchema),
      responses: {
        '201': ok('The user.', userSchema),
        '400': badInput,
        '401': noAdminToken,
        '409': problem('A user with this email (in any case) exists.'),
      },
    },
    get: {
      operationId: 'listUsers',
      summary: 'List every user.',
      responses: { '200': ok('Every user.', userListSchema), '401': noAdminToken },
    },
  },
  '/admin/users/{id}': {
    delete: {
      operationId: 'deleteUser',
      summary: 'Delete a user with every session, grant and token of theirs.',
      parameters: [idParameter('The user id (UUID).')],
      responses: {
        '204': { description: 'Deleted.' },
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such user.'),
      },
    },
  },
}
