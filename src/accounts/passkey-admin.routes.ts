import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { OPERATOR } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import { parseOrProblem } from '../input/parse-or-problem.js'
import type { Passkey, PasskeyService } from './passkey.service.js'
import type { UserService } from './user.service.js'

const userParams = z.object({ id: z.uuid('a user id (UUID)') })
const passkeyParams = userParams.extend({ passkey_id: z.uuid('a passkey id (UUID)') })

const passkeyJson = (p: Passkey) => ({
  id: p.id,
  name: p.name,
  backup_eligible: p.backupEligible,
  backed_up: p.backedUp,
  created_at: p.createdAt.toISOString(),
  last_used_at: p.lastUsedAt?.toISOString() ?? null,
})

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface PasskeyAdminServices {
  passkeys: PasskeyService
  users: UserService
}

/** GET /admin/users/:id/passkeys and DELETE /admin/users/:id/passkeys/:passkey_id (a lost device). */
export function passkeyAdminRoutes(services: PasskeyAdminServices) {
  return async (app: FastifyInstance) => {
    app.get('/admin/users/:id/passkeys', async (request) => {
      const { id } = parseOrProblem(userParams, request.params)
      if (!(await services.users.findUser(id))) throw new ProblemError(404, 'No user with this id.')
      const [passkeys, passwordSignIn] = await Promise.all([
        services.passkeys.list(id),
        services.passkeys.passwordSignIn(id),
      ])
      return { passkeys: passkeys.map(passkeyJson), password_sign_in: passwordSignIn !== false }
    })

    app.delete('/admin/users/:id/passkeys/:passkey_id', async (request, reply) => {
      const { id, passkey_id } = parseOrProblem(passkeyParams, request.params)
      if (!(await services.passkeys.remove(id, passkey_id, request, OPERATOR)))
        throw new ProblemError(404, 'This user has no passkey with this id.')
      return reply.code(204).send()
    })
  }
}
