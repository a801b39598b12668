import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ProblemError } from '../errors.js'
import { isClientId } from '../lib/identifiers.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { emailSchema, newUserSchema, type User, type UserService } from './user.service.js'
import type { GrantService } from '../grants/grant.service.js'

const userJson = (user: User) => ({
  id: user.id,
  email: user.email,
  created_at: user.createdAt.toISOString(),
})
const idParams = z.object({ id: z.uuid('a user id (UUID)') })
const appParams = idParams.extend({
  client_id: z.string().refine(isClientId, 'a client_id'),
})

export const USER_PAGE_DEFAULT = 100
export const USER_PAGE_MAX = 500
const search = z.string().trim().min(1, 'must not be empty').max(320, 'at most 320 characters')

export const userListQuery = z.object({
  email_prefix: search.optional(),
  email_contains: search.optional(),
  cursor: z.string().max(512, 'at most 512 characters').optional(),
  limit: z.coerce
    .number('a whole number')
    .int('a whole number')
    .min(1, 'at least 1')
    .max(USER_PAGE_MAX, `at most ${USER_PAGE_MAX}`)
    .default(USER_PAGE_DEFAULT),
})

export const userPatchSchema = z.strictObject({ email: emailSchema.optional() }, 'an object with email')

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface UserAdminServices {
  users: UserService
  grants: GrantService
}

/**
 * Admin API: create, list (paged, searched), change, delete users; revoke a user's grant to one
 * application; issue password-reset links.
 */
export function userAdminRoutes(services: UserAdminServices) {
  return async (app: FastifyInstance) => {
    app.post('/admin/users', async (request, reply) => {
      const input = parseOrProblem(newUserSchema, request.body)
      const user = await services.users.createUser(input, request)
      return reply.code(201).send(userJson(user))
    })
    app.get('/admin/users', async (request) => {
      const q = parseOrProblem(userListQuery, request.query)
      const page = await services.users.listUsers({
        emailPrefix: q.email_prefix,
        emailContains: q.email_contains,
        cursor: q.cursor,
        limit: q.limit,
      })
      return { users: page.users.map(userJson), next_cursor: page.nextCursor ?? null }
    })
    app.get('/admin/users/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      const user = await services.users.findUser(id)
      if (!user) throw new ProblemError(404, 'No user with this id.')
      return userJson(user)
    })
    app.patch('/admin/users/:id', async (request) => {
      const { id } = parseOrProblem(idParams, request.params)
      const changes = parseOrProblem(userPatchSchema, request.body)
      return userJson(await services.users.updateUser(id, changes, request))
    })
    app.delete('/admin/users/:id', async (request, reply) => {
      const { id } = parseOrProblem(idParams, request.params)
      if (!(await services.users.deleteUser(id, request)))
        throw new ProblemError(404, 'No user with this id.')
      return reply.code(204).send()
    })
    // The operator ends one user's access for one application (the user's Revoke, done for them).
    app.delete('/admin/users/:id/apps/:client_id', async (request, reply) => {
      const { id, client_id } = parseOrProblem(appParams, request.params)
      if (!(await services.grants.revokeByOperator(id, client_id, request)))
        throw new ProblemError(404, 'This user has no live grant to this application.')
      return reply.code(204).send()
    })
    // The link is in this answer only: never logged, never stored (the database keeps its hash).
    app.post('/admin/users/:id/reset-link', async (request, reply) => {
      const { id } = parseOrProblem(idParams, request.params)
      const link = await services.users.issueResetLink(id, request)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ user_id: id, url: link.url, expires_at: link.expiresAt.toISOString() })
    })
  }
}
