import type { Kysely } from 'kysely'
import { type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import type { Database } from '../db/database.js'
import { inRetriedTransaction } from '../db/transaction.js'
import type { Clock } from '../lib/clock.js'
import { sha256 } from '../lib/secrets.js'
import type { PasskeyService } from './passkey.service.js'
import { PasskeyRefusal } from './passkey.service.js'
import { consumeResetToken, voidResetTokensOf } from './password-reset.repository.js'
import { deleteSessionsOfUser } from './session.repository.js'
import type { UserGrants, UserService } from './user.service.js'

/**
 * The operator's reset link for a passwordless account: it registers a new passkey, and the account
 * stays passwordless. The same rules as a password reset (user.service.ts): the link is one-time,
 * stored hashed and good for 30 minutes; using it ends every sign-in session of the user and every
 * other unused link, and disconnects every application, in one transaction whose first statement
 * consumes the link. The WebAuthn ceremony is bound to the link and to the browser that opened it
 * (its pre-session): a challenge handed out for one link or browser answers for no other.
 */
export function createPasskeyResetService(
  db: Kysely<Database>,
  clock: Clock,
  deps: {
    users: Pick<UserService, 'resetLinkFor'>
    passkeys: Pick<
      PasskeyService,
      'registrationOptions' | 'checkRegistration' | 'storeRegistration' | 'refuse'
    >
    audit?: AuditRecorder
    grants?: UserGrants | undefined
  },
) {
  const audit = deps.audit ?? NO_AUDIT
  const binding = (preSession: string, token: string) => `reset:${preSession}:${sha256(token)}`

  /** The link's account when it is usable and passwordless (its reset registers a passkey). */
  async function passwordlessLink(token: string | undefined) {
    const link = await deps.users.resetLinkFor(token)
    return link?.restores === 'passkey' ? link : undefined
  }

  return {
    /** Options for navigator.credentials.create, or undefined when the link cannot register a passkey. */
    async options(token: string | undefined, preSession: string) {
      const link = await passwordlessLink(token)
      if (!link) return undefined
      return deps.passkeys.registrationOptions(
        { id: link.userId, email: link.email },
        binding(preSession, token!),
        'reset',
      )
    },

    /**
     * Uses the link: checks the registration (L3 §7.1, the challenge spent once) and stores the
     * passkey. False when the link is unknown, used, expired or not a passwordless account's; throws
     * PasskeyRefusal when the ceremony fails, and the link stays usable until it expires.
     */
    async reset(
      input: {
        token: string | undefined
        preSession: string
        responseText: string | undefined
        name: string
      },
      from?: RequestFacts,
    ): Promise<boolean> {
      const link = await passwordlessLink(input.token)
      if (!link) return false
      const token = input.token!
      const userId = link.userId
      const created = await deps.passkeys.checkRegistration(
        {
          userId,
          binding: binding(input.preSession, token),
          responseText: input.responseText,
          purpose: 'reset',
        },
        from,
      )
      const now = clock.now()
      try {
        return await inRetriedTransaction(db, async (trx) => {
          const used = await consumeResetToken(trx, sha256(token), now)
          if (!used || used.userId !== userId) return false
          const passkey = await deps.passkeys.storeRegistration(
            trx,
            { userId, name: input.name, created, purpose: 'reset' },
            from,
          )
          const sessionsEnded = await deleteSessionsOfUser(trx, userId)
          await voidResetTokensOf(trx, userId, now)
          const appsDisconnected = deps.grants
            ? await deps.grants.revokeAllForUser(trx, userId, 'password_reset', from)
            : 0
          await audit.record(trx, {
            type: 'passkey.reset',
            from,
            actor: { kind: 'user', id: userId },
            target: { kind: 'passkey', id: passkey.id },
            userId,
            details: {
              name: passkey.name,
              sessions_ended: sessionsEnded,
              apps_disconnected: appsDisconnected,
            },
          })
          return true
        })
      } catch (err) {
        if (err instanceof PasskeyRefusal) return deps.passkeys.refuse('reset', err, from, userId)
        throw err
      }
    },
  }
}

export type PasskeyResetService = ReturnType<typeof createPasskeyResetService>
