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
  markSessionReauthenticated,
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

/** How long a sign-in or a fresh check lets a session add a passkey or turn password sign-in off. */
export const REAUTH_WINDOW_SECONDS = 5 * 60

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

  /**
   * Opens a session for a user whose credentials were checked (a password here, a passkey in
   * passkey.service.ts): both are a full sign-in. The plain token goes only into the cookie; the
   * database keeps its SHA-256.
   */
  async function openSession(
    user: { id: string; email: string },
    method: 'password' | 'passkey',
    from?: RequestFacts,
  ): Promise<{ token: string; session: SignInSession }> {
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
        ...(method === 'passkey' ? { details: { method } } : {}),
      })
      return sessionId
    })
    return { token, session: { id, ...session } }
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
      type Checked =
        | { user: NonNullable<Awaited<ReturnType<typeof findUserCredentialsByEmail>>> }
        | { userId: string | undefined; reason: string }
      const attempt = await throttle.attempt<Checked>(throttle.accountOf(email), client, async () => {
        const user = possible ? await findUserCredentialsByEmail(db, email.trim()) : undefined
        const passwordOk = await checkPassword(user?.passwordHash, password)
        // A passwordless account (password sign-in turned off) refuses even its right password, with
        // the answer of a wrong one, after the same argon2 work and throttled the same way: the form
        // tells nothing apart.
        const ok = passwordOk && user !== undefined && user.passwordSignIn
        if (ok) return { ok, value: { user } }
        const reason = !user ? 'unknown_email' : passwordOk ? 'password_sign_in_off' : 'wrong_password'
        return { ok, value: { userId: user?.id, reason } }
      })
      if ('held' in attempt) return attempt
      if (!('user' in attempt.result)) {
        const { userId, reason } = attempt.result
        await audit.recordRefusal({
          type: 'sign_in.failed',
          from,
          actor: { kind: 'anonymous' },
          ...(userId ? { target: { kind: 'user', id: userId }, userId } : {}),
          details: { reason },
        })
        await recordLockout(attempt.lockout, userId, from)
        return { refused: true, userId }
      }
      return openSession(attempt.result.user, 'password', from)
    },

    openSession,

    /** Notes a fresh password or passkey check in this session (adding a passkey asks for one). */
    markReauthenticated: (sessionId: string) => markSessionReauthenticated(db, sessionId, clock.now()),

    /** Whether the session signed in, or checked a password or passkey again, in the last REAUTH_WINDOW. */
    isFresh(session: SignInSession): boolean {
      const last = Math.max(session.createdAt.getTime(), session.reauthenticatedAt?.getTime() ?? 0)
      return clock.now().getTime() - last <= REAUTH_WINDOW_SECONDS * 1000
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
