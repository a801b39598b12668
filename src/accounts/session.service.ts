import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { hasNul, isBase64url256Bits, newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import { prepareUnknownAccountHash, verifyPassword } from './password.js'
import {
  deleteSession,
  findLiveSessionByTokenHash,
  insertSession,
  type SignInSession,
} from './session.repository.js'
import type { SignInClient, SignInHold, SignInThrottle } from './sign-in-throttle.service.js'
import { findPasswordHash, findUserCredentialsByEmail } from './user.repository.js'

export type { SignInSession }

/** A session token is newSecret(); anything of another shape is not worth a query. */
/** What the database keeps of a session cookie's value; undefined for a value no session can have. */
export function sessionTokenHash(token: string | undefined): string | undefined {
  return token && isBase64url256Bits(token) ? sha256(token) : undefined
}

/** A refused sign-in: the user the email named, when it names one (for the audit trail only). */
export interface SignInRefusal {
  refused: true
  userId: string | undefined
}

/** An attempt the sign-in throttle held back before any password was checked. */
export interface SignInHeld {
  held: SignInHold
}

export function createSessionService(
  db: Kysely<Database>,
  clock: Clock,
  sessionTtlSeconds: number,
  throttle: SignInThrottle,
  counters: { passwordChecked(): void } = { passwordChecked: () => {} },
  audit: AuditRecorder = NO_AUDIT,
) {
  void prepareUnknownAccountHash()

  /** The one place a password is verified (argon2), counted for linkauth_password_checks_total. */
  function checkPassword(storedHash: string | undefined, password: string): Promise<boolean> {
    counters.passwordChecked()
    return verifyPassword(storedHash, password)
  }

  /** The moment a hold begins, once: refused attempts while held are not recorded one by one. */
  async function recordLockout(limit: string | undefined, userId: string | undefined, from?: RequestFacts) {
    if (!limit) return
    await audit.recordRefusal({
      type: 'sign_in.locked',
      from,
      actor: { kind: 'anonymous' },
      ...(userId ? { target: { kind: 'user', id: userId }, userId } : {}),
      details: { limit },
    })
  }

  return {
    /**
     * Checks the credentials under the sign-in throttle (held back: nothing checked) and opens a
     * session. Unknown email and wrong password take the same argon2 work and both answer a
     * refusal, so neither the answer nor its timing tells them apart. The plain token goes only into
     * the cookie; the database keeps its SHA-256.
     */
    async signIn(
      email: string,
      password: string,
      client: SignInClient,
      from?: RequestFacts,
    ): Promise<{ token: string; session: SignInSession } | SignInRefusal | SignInHeld> {
      // An email no user can have (too long, or with a NUL, which PostgreSQL cannot compare) is not
      // looked up, and costs the same argon2 work as an unknown one.
      const possible = email.length <= 320 && !hasNul(email)
      const attempt = await throttle.attempt(throttle.accountOf(email), client, async () => {
        const user = possible ? await findUserCredentialsByEmail(db, email.trim()) : undefined
        const ok = (await checkPassword(user?.passwordHash, password)) && user !== undefined
        return { ok, value: ok ? user : user?.id }
      })
      if ('held' in attempt) return attempt
      if (typeof attempt.result !== 'object') {
        const userId = attempt.result
        await audit.recordRefusal({
          type: 'sign_in.failed',
          from,
          actor: { kind: 'anonymous' },
          ...(userId ? { target: { kind: 'user', id: userId }, userId } : {}),
          details: { reason: userId ? 'wrong_password' : 'unknown_email' },
        })
        await recordLockout(attempt.lockout, userId, from)
        return { refused: true, userId }
      }
      const user = attempt.result
      const token = newSecret()
      const now = clock.now()
      const session = {
        userId: user.id,
        email: user.email,
        csrfSecret: newSecret(),
        createdAt: now,
        expiresAt: addSeconds(now, sessionTtlSeconds),
      }
      const id = await db.transaction().execute(async (trx) => {
        const sessionId = await insertSession(trx, { ...session, tokenHash: sha256(token) })
        await audit.record(trx, {
          type: 'sign_in.succeeded',
          from,
          actor: { kind: 'user', id: user.id },
          target: { kind: 'user', id: user.id },
          userId: user.id,
        })
        return sessionId
      })
      return { token, session: { id, ...session } }
    },

    /** The live session a cookie value names, or undefined (absent, malformed, unknown or expired). */
    async findSession(token: string | undefined): Promise<SignInSession | undefined> {
      const tokenHash = sessionTokenHash(token)
      return tokenHash ? findLiveSessionByTokenHash(db, tokenHash, clock.now()) : undefined
    },

    signOut: (sessionId: string) => deleteSession(db, sessionId),

    /**
     * Checks a signed-in user's password again (the password-change form) under the sign-in
     * throttle of the account their email names: its failures are sign-in failures of the account.
     */
    async verifyPasswordOf(
      user: { userId: string; email: string },
      password: string,
      client: SignInClient,
      from?: RequestFacts,
    ): Promise<{ ok: boolean } | SignInHeld> {
      const attempt = await throttle.attempt(throttle.accountOf(user.email), client, async () => {
        const ok = await checkPassword(await findPasswordHash(db, user.userId), password)
        return { ok, value: ok }
      })
      if ('held' in attempt) return attempt
      await recordLockout(attempt.lockout, user.userId, from)
      return { ok: attempt.result }
    },
  }
}

export type SessionService = ReturnType<typeof createSessionService>
