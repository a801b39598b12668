import type { Kysely } from 'kysely'
import { z } from 'zod'
import { type AuditRecorder, NO_AUDIT, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import { inRetriedTransaction } from '../db/transaction.js'
import { ProblemError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isBase64url256Bits, isUuid, newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import type { GrantService } from '../grants/grant.service.js'
import { hashPassword } from './password.js'
import {
  consumeResetToken,
  findUsableResetToken,
  insertPasswordResetToken,
  voidResetTokensOf,
} from './password-reset.repository.js'
import {
  deleteUser,
  findUserById,
  insertUser,
  listUsersPage,
  setPasswordHash,
  setPasswordSignIn,
  updateUserEmail,
  type User,
} from './user.repository.js'

export type { User }

/** One home for what a password must be: at user creation, a change, and a reset. */
export const passwordSchema = z.string().min(8, 'at least 8 characters').max(1024, 'at most 1024 characters')
export const emailSchema = z.string().trim().pipe(z.email('a valid email address').max(320))

export const newUserSchema = z.object({ email: emailSchema, password: passwordSchema })

export type NewUser = z.output<typeof newUserSchema>

/** A usable reset link: whose, and what it restores (see resetLinkFor). */
export interface ResetLink {
  userId: string
  email: string
  restores: 'password' | 'passkey'
}

/** How long a password-reset link works. */
export const RESET_LINK_TTL_SECONDS = 30 * 60
/** Where a reset link leads (its token in the query: the logs redact `token=`). */
export const RESET_PASSWORD_PATH = '/account/reset-password'

export interface UserPage {
  users: User[]
  /** Continues after the last user of this page; undefined when there are no more. */
  nextCursor: string | undefined
}

const encodeUserCursor = (position: string, id: string) =>
  Buffer.from(`${position}|${id}`).toString('base64url')

function decodeUserCursor(cursor: string): { createdAt: string; id: string } | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  const match = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?[+-]\d{2}(?::\d{2})?)\|(.+)$/.exec(text)
  return match && isUuid(match[2]!) ? { createdAt: match[1]!, id: match[2]! } : undefined
}

const emailTaken = () => new ProblemError(409, 'email: a user with this email already exists', 'email')

/** What a password reset or change needs of the grants: disconnect every application of the user. */
export type UserGrants = Pick<GrantService, 'revokeAllForUser'>

export function createUserService(
  db: Kysely<Database>,
  clock: Clock,
  config: Pick<Config, 'issuer' | 'passkeys'>,
  audit: AuditRecorder = NO_AUDIT,
  grants?: UserGrants,
) {
  /** Every application of the user disconnected, in `trx`; how many grants went. */
  const disconnectAll = async (
    trx: Kysely<Database>,
    userId: string,
    reason: 'password_reset' | 'password_changed',
    from: RequestFacts | undefined,
  ): Promise<number> => (grants ? grants.revokeAllForUser(trx, userId, reason, from) : 0)

  /**
   * The account a usable reset link is for, and what using it restores: the way the account signs
   * in. A passwordless account (password sign-in off) gets a new passkey and stays passwordless;
   * any other a new password. With passkeys turned off on the server a password is the only way
   * back, so it is a password then too (and password sign-in comes back on).
   */
  async function resetLinkFor(token: string | undefined): Promise<ResetLink | undefined> {
    if (!token || !isBase64url256Bits(token)) return undefined
    const link = await findUsableResetToken(db, sha256(token), clock.now())
    if (!link) return undefined
    const restores = config.passkeys && !link.passwordSignIn ? 'passkey' : 'password'
    return { userId: link.userId, email: link.email, restores }
  }

  return {
    /** Creates a user with an argon2id password hash; a taken email (any case) → 409. */
    async createUser(input: NewUser, from?: RequestFacts): Promise<User> {
      const passwordHash = await hashPassword(input.password)
      try {
        return await db.transaction().execute(async (trx) => {
          const user = await insertUser(trx, input.email, passwordHash)
          await audit.record(trx, {
            type: 'user.created',
            from,
            actor: OPERATOR,
            target: { kind: 'user', id: user.id },
            userId: user.id,
          })
          return user
        })
      } catch (err) {
        if (isUniqueViolation(err)) throw emailTaken()
        throw err
      }
    },

    /** A page of users, oldest first, optionally searched by email (case-insensitive). */
    async listUsers(query: {
      emailPrefix?: string | undefined
      emailContains?: string | undefined
      cursor?: string | undefined
      limit: number
    }): Promise<UserPage> {
      let after
      if (query.cursor !== undefined) {
        after = decodeUserCursor(query.cursor)
        if (!after) throw new ProblemError(400, 'cursor: not a cursor this API gave out', 'cursor')
      }
      const rows = await listUsersPage(db, { ...query, after, limit: query.limit + 1 })
      const page = rows.slice(0, query.limit)
      const last = page.at(-1)
      return {
        users: page.map(({ position: _p, ...user }) => user),
        nextCursor: rows.length > query.limit && last ? encodeUserCursor(last.position, last.id) : undefined,
      }
    },

    findUser: (id: string) => findUserById(db, id),

    /** Changes a user's email: 404 when there is no such user, 409 when another user has it (any case). */
    async updateUser(
      id: string,
      changes: { email?: string | undefined },
      from?: RequestFacts,
    ): Promise<User> {
      try {
        return await db.transaction().execute(async (trx) => {
          const current = await findUserById(trx, id)
          if (!current) throw new ProblemError(404, 'No user with this id.')
          if (changes.email === undefined || changes.email === current.email) return current
          const user = await updateUserEmail(trx, id, changes.email)
          if (!user) throw new ProblemError(404, 'No user with this id.')
          await audit.record(trx, {
            type: 'user.updated',
            from,
            actor: OPERATOR,
            target: { kind: 'user', id },
            userId: id,
            details: { changed: ['email'] },
          })
          return user
        })
      } catch (err) {
        if (isUniqueViolation(err)) throw emailTaken()
        throw err
      }
    },

    /**
     * Removes a user and, by cascade, every session, grant, code and refresh family of theirs. The
     * cascade locks rows in another order than a code exchange or refresh running at that moment.
     * Their audit history stays (it names them by id only).
     */
    deleteUser: (id: string, from?: RequestFacts) =>
      inRetriedTransaction(db, async (trx) => {
        const deleted = await deleteUser(trx, id)
        if (deleted)
          await audit.record(trx, {
            type: 'user.deleted',
            from,
            actor: OPERATOR,
            target: { kind: 'user', id },
            userId: id,
          })
        return deleted
      }),

    /**
     * A signed-in user's new password (the current one was checked by the caller): stores its argon2id
     * hash and ends every other sign-in session of theirs and every unused reset link, in one
     * transaction with its audit row; with `disconnectApps`, every connected application too (their
     * grants and refresh tokens, announced on the revocation feed).
     */
    async changePassword(
      userId: string,
      keepSessionId: string,
      password: string,
      from?: RequestFacts,
      options: { disconnectApps?: boolean } = {},
    ): Promise<{ appsDisconnected: number }> {
      const passwordHash = await hashPassword(password)
      return inRetriedTransaction(db, async (trx) => {
        const { updated, sessionsEnded } = await setPasswordHash(trx, userId, passwordHash, keepSessionId)
        if (!updated) throw new ProblemError(404, 'No user with this id.')
        await voidResetTokensOf(trx, userId, clock.now())
        const appsDisconnected = options.disconnectApps
          ? await disconnectAll(trx, userId, 'password_changed', from)
          : 0
        await audit.record(trx, {
          type: 'password.changed',
          from,
          actor: { kind: 'user', id: userId },
          target: { kind: 'user', id: userId },
          userId,
          details: { other_sessions_ended: sessionsEnded, apps_disconnected: appsDisconnected },
        })
        return { appsDisconnected }
      })
    },

    /**
     * A one-time link that lets the user set a new password, valid RESET_LINK_TTL_SECONDS. The token
     * (256 random bits) exists only in the returned URL; the database keeps its SHA-256.
     */
    async issueResetLink(userId: string, from?: RequestFacts): Promise<{ url: string; expiresAt: Date }> {
      const token = newSecret()
      const now = clock.now()
      const expiresAt = addSeconds(now, RESET_LINK_TTL_SECONDS)
      await db.transaction().execute(async (trx) => {
        const user = await findUserById(trx, userId)
        if (!user) throw new ProblemError(404, 'No user with this id.')
        await insertPasswordResetToken(trx, { tokenHash: sha256(token), userId, createdAt: now, expiresAt })
        await audit.record(trx, {
          type: 'password.reset_link_issued',
          from,
          actor: OPERATOR,
          target: { kind: 'user', id: userId },
          userId,
          details: { expires_at: expiresAt.toISOString() },
        })
      })
      const url = new URL(RESET_PASSWORD_PATH, `${config.issuer}/`)
      url.searchParams.set('token', token)
      return { url: url.href, expiresAt }
    },

    /** Whether a reset link's token works now (unused, unexpired): the page shows the form only then. */
    async isUsableResetToken(token: string | undefined): Promise<boolean> {
      return (await resetLinkFor(token)) !== undefined
    },

    resetLinkFor,

    /**
     * Uses a reset link: sets the password, ends every sign-in session of the user and disconnects
     * every application (an intruder's connected app must not outlive the recovery), in one
     * transaction whose first statement consumes the link, so a link works once however many
     * requests race. False when the link is unknown, used or expired.
     */
    async resetPassword(token: string | undefined, password: string, from?: RequestFacts): Promise<boolean> {
      // No argon2 work for a link that cannot work; the UPDATE below decides among concurrent uses.
      // A passwordless account's link registers a passkey (resetLinkFor): it never sets a password.
      if ((await resetLinkFor(token))?.restores !== 'password') return false
      const passwordHash = await hashPassword(password)
      const now = clock.now()
      return inRetriedTransaction(db, async (trx) => {
        const link = await consumeResetToken(trx, sha256(token!), now)
        if (!link) return false
        const { sessionsEnded } = await setPasswordHash(trx, link.userId, passwordHash)
        // Off only where passkeys are turned off on the server: the password is the way back then.
        await setPasswordSignIn(trx, link.userId, true)
        await voidResetTokensOf(trx, link.userId, now)
        const appsDisconnected = await disconnectAll(trx, link.userId, 'password_reset', from)
        await audit.record(trx, {
          type: 'password.reset',
          from,
          actor: { kind: 'user', id: link.userId },
          target: { kind: 'user', id: link.userId },
          userId: link.userId,
          details: { sessions_ended: sessionsEnded, apps_disconnected: appsDisconnected },
        })
        return true
      })
    },
  }
}

export type UserService = ReturnType<typeof createUserService>
