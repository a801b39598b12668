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

export function createSessionService(
  db: Kysely<Database>,
  clock: Clock,
  sessionTtlSeconds: number,
  audit: AuditRecorder = NO_AUDIT,
) {
  void prepareUnknownAccountHash()
  return {
    /**
     * Checks the credentials and opens a session. Unknown email and wrong password take the same
     * argon2 work and both answer undefined, so neither the answer nor its timing tells them apart.
     * The plain token goes only into the cookie; the database keeps its SHA-256.
     */
    async signIn(
      email: string,
      password: string,
      from?: RequestFacts,
    ): Promise<{ token: string; session: SignInSession } | SignInRefusal> {
      // An email no user can have (too long, or with a NUL, which PostgreSQL cannot compare) is not
      // looked up, and costs the same argon2 work as an unknown one.
      const possible = email.length <= 320 && !hasNul(email)
      const user = possible ? await findUserCredentialsByEmail(db, email.trim()) : undefined
      const ok = await verifyPassword(user?.passwordHash, password)
      if (!ok || !user) {
        await audit.recordRefusal({
          type: 'sign_in.failed',
          from,
          actor: { kind: 'anonymous' },
          ...(user ? { target: { kind: 'user', id: user.id }, userId: user.id } : {}),
          details: { reason: user ? 'wrong_password' : 'unknown_email' },
        })
        return { refused: true, userId: user?.id }
      }
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

    /** Checks a signed-in user's password again (the password-change form): same argon2 work as sign-in. */
    async verifyPasswordOf(userId: string, password: string): Promise<boolean> {
      const stored = await findPasswordHash(db, userId)
      return verifyPassword(stored, password)
    },
  }
}

export type SessionService = ReturnType<typeof createSessionService>
