import type { Kysely } from 'kysely'
import { z } from 'zod'
import type { Database } from '../db/database.js'
import { isUniqueViolation, retryOnConcurrencyConflict } from '../db/errors.js'
import { ProblemError } from '../errors.js'
import { hashPassword } from './password.js'
import { deleteUser, findUserById, insertUser, listUsers, type User } from './user.repository.js'

export type { User }

export const newUserSchema = z.object({
  email: z.string().trim().pipe(z.email('a valid email address').max(320)),
  password: z.string().min(8, 'at least 8 characters').max(1024, 'at most 1024 characters'),
})

export type NewUser = z.output<typeof newUserSchema>

export function createUserService(db: Kysely<Database>) {
  return {
    /** Creates a user with an argon2id password hash; a taken email (any case) → 409. */
    async createUser(input: NewUser): Promise<User> {
      const passwordHash = await hashPassword(input.password)
      try {
        return await insertUser(db, input.email, passwordHash)
      } catch (err) {
        if (isUniqueViolation(err))
          throw new ProblemError(409, 'email: a user with this email already exists', 'email')
        throw err
      }
    },
    listUsers: () => listUsers(db),
    findUser: (id: string) => findUserById(db, id),
    /**
     * Removes a user and, by cascade, every session, grant, code and refresh family of theirs. The
     * cascade locks rows in another order than a code exchange or refresh running at that moment.
     */
    deleteUser: (id: string) => retryOnConcurrencyConflict(() => deleteUser(db, id)),
  }
}

export type UserService = ReturnType<typeof createUserService>
