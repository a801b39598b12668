import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ProblemError } from '../errors.js'
import type { Services } from '../services.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import { newUserSchema, type User } from './user.service.js'

const userJson = (user: User) => ({
  id: user.id,
  email: user.email,
  created_at: user.createdAt.toISOString(),
})
const idParams = z.object({ id: z.uuid('a user id (UUID)') })

/** Admin API: create, list and delete users. */
export function userAdminRoutes(services: Pick<Services, 'users'>) {
  return async (app: FastifyInstance) => {
    app.post('/admin/users', async (request, reply) => {
      const input = parseOrProblem(newUserSchema, request.body)
      const user = await services.users.createUser(input)
      return reply.code(201).send(userJson(user))
    })
    app.get('/admin/users', async () => ({ users: (await services.users.listUsers()).map(userJson) }))
    app.delete('/admin/users/:id', async (request, reply) => {
      const { id } = parseOrProblem(idParams, request.params)
      if (!(await services.users.deleteUser(id))) throw new ProblemError(404, 'No user with this id.')
      return reply.code(204).send()
    })
  }
}
