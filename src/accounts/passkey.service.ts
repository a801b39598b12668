import type { Kysely } from 'kysely'
import { type AuditActor, type AuditRecorder, NO_AUDIT, type RequestFacts } from '../audit/audit.service.js'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import { ProblemError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { newSecret } from '../lib/identifiers.js'
import { sha256 } from '../lib/secrets.js'
import {
  countPasskeys,
  deletePasskey,
  findPasskeyByCredentialId,
  insertPasskey,
  listCredentialIds,
  listPasskeys,
  type Passkey,
  recordPasskeyUse,
  renamePasskey,
} from './passkey.repository.js'
import { findPasswordSignIn, findUserById, lockPasswordSignIn, setPasswordSignIn } from './user.repository.js'
import { type ChallengePurpose, insertChallenge, spendChallenge } from './webauthn-challenge.repository.js'
import {
  authenticationOptions,
  CHALLENGE_TTL_SECONDS,
  challengeOf,
  PasskeyRefusal,
  parseAuthenticationResponse,
  parseRegistrationResponse,
  registrationOptions,
  relyingParty,
  userIdOfHandle,
  type NewPasskey,
  verifyAssertion,
  verifyRegistration,
} from './webauthn.js'

export { PasskeyRefusal }
export type { Passkey }

/** What a passkey's name may be: what the person typed, trimmed, 1–64 characters. */
export function passkeyName(text: string | undefined): string | undefined {
  const name = (text ?? '').trim().replace(/\s+/g, ' ')
  return name.length >= 1 && name.length <= 64 ? name : undefined
}

export interface PasskeyEvents {
  signedIn(): void
  refused(ceremony: ChallengePurpose, reason: string): void
}

const NO_EVENTS: PasskeyEvents = { signedIn: () => {}, refused: () => {} }

/**
 * Passkeys: the ceremonies' challenges (single-use, short-lived, bound to the browser they were
 * handed to by `binding`, a value only that browser holds: its pre-session for sign-in and reset,
 * its session otherwise), sign-in, registration, a fresh check in a session, and the user's list.
 */
export function createPasskeyService(
  db: Kysely<Database>,
  clock: Clock,
  config: Pick<Config, 'issuer' | 'passkeyRpId' | 'passkeys' | 'brand'>,
  audit: AuditRecorder = NO_AUDIT,
  events: PasskeyEvents = NO_EVENTS,
) {
  const rp = relyingParty(config)

  function requireEnabled(): void {
    if (!config.passkeys) throw new ProblemError(404, 'Passkeys are turned off on this server.')
  }

  async function issueChallenge(purpose: ChallengePurpose, binding: string, userId: string | null) {
    requireEnabled()
    const challenge = newSecret()
    const now = clock.now()
    await insertChallenge(db, {
      challengeHash: sha256(challenge),
      purpose,
      bindingHash: sha256(`webauthn:${binding}`),
      userId,
      createdAt: now,
      expiresAt: addSeconds(now, CHALLENGE_TTL_SECONDS),
    })
    return challenge
  }

  /** The library calls this with the challenge the response signed: accepted once, if it fits. */
  function spender(purpose: ChallengePurpose, binding: string, userId: string | null) {
    return async (challenge: string) => {
      if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return false
      const spent = await spendChallenge(db, {
        challengeHash: sha256(challenge),
        purpose,
        bindingHash: sha256(`webauthn:${binding}`),
        now: clock.now(),
      })
      return spent !== undefined && spent.userId === userId
    }
  }

  async function refuse(
    ceremony: ChallengePurpose,
    refusal: PasskeyRefusal,
    from: RequestFacts | undefined,
    userId?: string,
  ): Promise<never> {
    events.refused(ceremony, refusal.reason)
    await audit.recordRefusal({
      type: 'passkey.refused',
      from,
      actor: userId ? { kind: 'user', id: userId } : { kind: 'anonymous' },
      ...(userId ? { target: { kind: 'user', id: userId }, userId } : {}),
      details: { ceremony, reason: refusal.reason },
    })
    throw refusal
  }

  /** Checks an assertion for `purpose`; `userId` null accepts any user's passkey (sign-in). */
  async function checkAssertion(
    purpose: ChallengePurpose,
    binding: string,
    userId: string | null,
    responseText: string | undefined,
    from: RequestFacts | undefined,
  ): Promise<{ id: string; email: string }> {
    let owner: string | undefined
    try {
      requireEnabled()
      const response = parseAuthenticationResponse(responseText)
      const passkey = await findPasskeyByCredentialId(db, response.rawId)
      owner = passkey?.userId
      if (!passkey || response.id !== response.rawId) {
        // Spend the challenge all the same: a refused response never leaves it usable.
        await spender(purpose, binding, userId)(challengeOf(response) ?? '')
        // No passkey of that ID here (removed from its account, or never registered): named, so
        // that the browser which offered it can be told to forget it.
        throw new PasskeyRefusal('unknown_passkey', passkey ? undefined : response.rawId)
      }
      const handle = response.response.userHandle
      if (
        (userId !== null && passkey.userId !== userId) ||
        (handle && userIdOfHandle(handle) !== passkey.userId)
      ) {
        await spender(purpose, binding, userId)(challengeOf(response) ?? '')
        throw new PasskeyRefusal('wrong_user')
      }
      const challenge = tracked(spender(purpose, binding, userId))
      const checked = await verifyAssertion(rp, response, passkey, challenge.spend).catch(challenge.explain)
      const moved = await recordPasskeyUse(db, passkey.id, {
        checkedSignCount: passkey.signCount,
        signCount: checked.signCount,
        backedUp: checked.backedUp,
        at: clock.now(),
      })
      // Another assertion with this passkey was accepted meanwhile: its counter is the newer one.
      if (!moved && (passkey.signCount > 0 || checked.signCount > 0))
        throw new PasskeyRefusal('verification_failed')
      const user = await findUserById(db, passkey.userId)
      if (!user) throw new PasskeyRefusal('unknown_passkey')
      return user
    } catch (err) {
      if (err instanceof PasskeyRefusal) return refuse(purpose, err, from, owner)
      throw err
    }
  }

  /**
   * L3 §7.1 for a registration answered to a challenge of `purpose` handed to `binding` for this user
   * (spent once); answers what to store. Refusals are counted and audited, then thrown.
   */
  async function checkRegistration(
    input: {
      userId: string
      binding: string
      responseText: string | undefined
      purpose: 'register' | 'reset'
    },
    from?: RequestFacts,
  ): Promise<NewPasskey> {
    try {
      requireEnabled()
      const response = parseRegistrationResponse(input.responseText)
      const challenge = tracked(spender(input.purpose, input.binding, input.userId))
      return await verifyRegistration(rp, response, challenge.spend).catch(challenge.explain)
    } catch (err) {
      if (err instanceof PasskeyRefusal) return refuse(input.purpose, err, from, input.userId)
      throw err
    }
  }

  /**
   * Stores a checked passkey and its audit row in `trx` (the caller's transaction: a reset link's
   * too). An ID registered already (to anyone) throws PasskeyRefusal('already_registered'): the
   * caller hands it to `refuse` once the transaction has rolled back.
   */
  async function storeRegistration(
    trx: Kysely<Database>,
    input: {
      userId: string
      name: string
      created: NewPasskey
      purpose: 'register' | 'reset'
      actor?: AuditActor
    },
    from?: RequestFacts,
  ): Promise<Passkey> {
    let passkey: Passkey
    try {
      passkey = await insertPasskey(trx, {
        ...input.created,
        userId: input.userId,
        name: input.name,
        createdAt: clock.now(),
      })
    } catch (err) {
      if (isUniqueViolation(err)) throw new PasskeyRefusal('already_registered')
      throw err
    }
    await audit.record(trx, {
      type: 'passkey.registered',
      from,
      actor: input.actor ?? { kind: 'user', id: input.userId },
      target: { kind: 'passkey', id: passkey.id },
      userId: input.userId,
      details: { name: passkey.name, backup_eligible: passkey.backupEligible, via: input.purpose },
    })
    return passkey
  }

  return {
    enabled: config.passkeys,
    relyingParty: rp,

    /** Options for a sign-in (conditional mediation or the button): any passkey of this RP. */
    async signInOptions(preSession: string) {
      return authenticationOptions(rp, await issueChallenge('sign_in', preSession, null))
    },

    /**
     * Checks a sign-in assertion; answers its user (a full sign-in, as a password is) or throws
     * PasskeyRefusal. The challenge must have been handed to this very pre-session.
     */
    async verifySignIn(preSession: string, responseText: string | undefined, from?: RequestFacts) {
      const user = await checkAssertion('sign_in', preSession, null, responseText, from)
      events.signedIn()
      return user
    },

    /** Options for a fresh check with one of the user's own passkeys. */
    async reauthenticationOptions(userId: string, sessionId: string) {
      const challenge = await issueChallenge('reauthenticate', sessionId, userId)
      return authenticationOptions(rp, challenge, await listCredentialIds(db, userId))
    },

    verifyReauthentication: (
      userId: string,
      sessionId: string,
      responseText: string | undefined,
      from?: RequestFacts,
    ) => checkAssertion('reauthenticate', sessionId, userId, responseText, from).then(() => undefined),

    /** Options to register a passkey for the user (`binding`: the session, or a reset link's pre-session). */
    async registrationOptions(
      user: { id: string; email: string },
      binding: string,
      purpose: 'register' | 'reset' = 'register',
    ) {
      const challenge = await issueChallenge(purpose, binding, user.id)
      return registrationOptions(rp, user, challenge, await listCredentialIds(db, user.id))
    },

    /**
     * Checks a registration and stores the passkey with its audit row, in one transaction of its own.
     * Throws PasskeyRefusal.
     */
    async register(
      input: { userId: string; binding: string; responseText: string | undefined; name: string },
      from?: RequestFacts,
    ): Promise<Passkey> {
      const created = await checkRegistration({ ...input, purpose: 'register' }, from)
      try {
        return await db
          .transaction()
          .execute((trx) => storeRegistration(trx, { ...input, created, purpose: 'register' }, from))
      } catch (err) {
        if (err instanceof PasskeyRefusal) return refuse('register', err, from, input.userId)
        throw err
      }
    },

    checkRegistration,
    storeRegistration,
    /** Counts and audits a refusal found outside this service's own ceremonies, then throws it. */
    refuse,

    list: (userId: string) => listPasskeys(db, userId),

    async rename(
      userId: string,
      id: string,
      name: string,
      from?: RequestFacts,
    ): Promise<Passkey | undefined> {
      return db.transaction().execute(async (trx) => {
        const passkey = await renamePasskey(trx, userId, id, name)
        if (passkey)
          await audit.record(trx, {
            type: 'passkey.renamed',
            from,
            actor: { kind: 'user', id: userId },
            target: { kind: 'passkey', id },
            userId,
            details: { name },
          })
        return passkey
      })
    },

    /**
     * Removes a passkey. A user whose password sign-in is off keeps at least one (409): removing the
     * last would lock them out. The operator (actor) may remove any: the reset link is the way back.
     */
    async remove(
      userId: string,
      id: string,
      from?: RequestFacts,
      actor?: AuditActor,
    ): Promise<Passkey | undefined> {
      return db.transaction().execute(async (trx) => {
        // The user's row first: a concurrent removal or "password sign-in off" waits for this one.
        const passwordSignIn = await lockPasswordSignIn(trx, userId)
        const passkey = await deletePasskey(trx, userId, id)
        if (!passkey) return undefined
        if (!actor && passwordSignIn === false && (await countPasskeys(trx, userId)) === 0)
          throw new ProblemError(
            409,
            'This is your last passkey and password sign-in is off. Turn password sign-in on first.',
          )
        await audit.record(trx, {
          type: 'passkey.removed',
          from,
          actor: actor ?? { kind: 'user', id: userId },
          target: { kind: 'passkey', id },
          userId,
          details: { name: passkey.name },
        })
        return passkey
      })
    },

    passwordSignIn: (userId: string) => findPasswordSignIn(db, userId),

    /** Turns password sign-in off (needs a passkey: 409 without one) or on again. */
    async setPasswordSignIn(userId: string, on: boolean, from?: RequestFacts): Promise<void> {
      await db.transaction().execute(async (trx) => {
        // Locked before counting: a passkey removal running meanwhile waits, then sees this change.
        const current = await lockPasswordSignIn(trx, userId)
        if (!on && (await countPasskeys(trx, userId)) === 0)
          throw new ProblemError(409, 'Add a passkey before you turn password sign-in off.')
        if (current === on) return
        await setPasswordSignIn(trx, userId, on)
        await audit.record(trx, {
          type: on ? 'password_sign_in.enabled' : 'password_sign_in.disabled',
          from,
          actor: { kind: 'user', id: userId },
          target: { kind: 'user', id: userId },
          userId,
        })
      })
    },
  }
}

/**
 * Remembers whether the challenge fitted when the library spent it, so that a refusal says why: a
 * challenge spent before (a replay), expired, or handed to another browser or ceremony.
 */
function tracked(spend: (challenge: string) => Promise<boolean>) {
  let fits: boolean | undefined
  return {
    spend: async (challenge: string) => (fits = await spend(challenge)),
    explain(err: unknown): never {
      throw fits === false ? new PasskeyRefusal('unknown_challenge') : err
    },
  }
}

export type PasskeyService = ReturnType<typeof createPasskeyService>
