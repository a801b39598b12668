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
  nextCursor,
  pathParameter,
  queryParameter,
} from '../openapi/describe.js'
import { USER_PAGE_DEFAULT, USER_PAGE_MAX, userPatchSchema } from './user.routes.js'
import { newUserSchema } from './user.service.js'

export const userSchema = z.object({ id: z.string(), email: z.string(), created_at: isoTime })
export const userListSchema = z.object({
  users: z.array(userSchema),
  next_cursor: nextCursor('Pass as `cursor` for the next page; null when there is none.'),
})
export const resetLinkSchema = z.object({
  user_id: z.string(),
  url: z.string().meta({
    description:
      'The one-time link (valid 30 minutes, single use). Shown only in this answer: send it to the user.',
  }),
  expires_at: isoTime,
})

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
      summary: 'List users, oldest first, one page at a time; search by email.',
      parameters: [
        queryParameter('email_prefix', 'Only users whose email starts with this (any case).'),
        queryParameter('email_contains', 'Only users whose email contains this (any case).'),
        queryParameter('cursor', 'The `next_cursor` of the previous page.'),
        queryParameter('limit', `Users per page, 1–${USER_PAGE_MAX} (default ${USER_PAGE_DEFAULT}).`, {
          type: 'integer',
          minimum: 1,
          maximum: USER_PAGE_MAX,
        }),
      ],
      responses: {
        '200': ok('A page of users.', userListSchema),
        '400': badInput,
        '401': noAdminToken,
      },
    },
  },
  '/admin/users/{id}': {
    get: {
      operationId: 'getUser',
      summary: 'Show one user.',
      parameters: [idParameter('The user id (UUID).')],
      responses: {
        '200': ok('The user.', userSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such user.'),
      },
    },
    patch: {
      operationId: 'updateUser',
      summary: "Change a user's email.",
      parameters: [idParameter('The user id (UUID).')],
      requestBody: jsonBody(userPatchSchema),
      responses: {
        '200': ok('The user as changed.', userSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such user.'),
        '409': problem('Another user has this email (in any case).'),
      },
    },
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
  '/admin/users/{id}/apps/{client_id}': {
    delete: {
      operationId: 'revokeUserGrant',
      summary:
        "Revoke a user's grant to one application with every refresh family under it, at once (the user's Revoke, done by the operator).",
      parameters: [idParameter('The user id (UUID).'), pathParameter('client_id', 'The application.')],
      responses: {
        '204': { description: 'Revoked.' },
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No live grant of this user to this application.'),
      },
    },
  },
  '/admin/users/{id}/reset-link': {
    post: {
      operationId: 'issuePasswordResetLink',
      summary:
        'Issue a one-time password-reset link for the user (valid 30 minutes, single use; only its hash is stored).',
      parameters: [idParameter('The user id (UUID).')],
      responses: {
        '201': ok('The link, to send to the user.', resetLinkSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No such user.'),
      },
    },
  },
}
