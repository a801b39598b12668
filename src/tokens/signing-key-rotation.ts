import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Database } from '../db/database.js'
import { type AuditRecorder, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import { ProblemError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import { publicInfo, type SigningKeyMaker } from './signing-key-maker.js'
import type { SigningKeySet } from './signing-key-set.js'
import {
  activatePendingSigningKey,
  findPendingSigningKey,
  findSigningKey,
  inSigningKeyLock,
  insertSigningKey,
  retireActiveSigningKey,
  retirePendingSigningKeys,
  revokeSigningKey,
  type SigningKeyInfo,
  type StoredSigningKey,
} from './signing-key.repository.js'

export interface RevocationResult {
  key: SigningKeyInfo
  /** The key that signs from now on, when the revoked key was the active one. */
  replacement?: SigningKeyInfo
  /** False when the key had been revoked before (nothing changed). */
  changed: boolean
}

export interface SigningKeyRotationDeps {
  db: Kysely<Database>
  clock: Clock
  logger: Logger
  audit: AuditRecorder
  maker: SigningKeyMaker
  keySet: Pick<SigningKeySet, 'reload' | 'forget'>
}

/** The operator's changes of the key set: a rotation by hand, and the emergency revocation of a key. */
export function createSigningKeyRotation(deps: SigningKeyRotationDeps) {
  const { db, clock, logger, audit, maker, keySet } = deps
  return {
    /**
     * Retires the active key and makes a new one active, in one locked transaction; signs with it from
     * now on. A key waiting in the schedule is dropped: the schedule starts again from this one.
     */
    async rotate(from?: RequestFacts): Promise<SigningKeyInfo> {
      const fresh = maker.newStoredKey()
      const retiredKid = await inSigningKeyLock(
        db,
        async (trx) => {
          await retirePendingSigningKeys(trx, fresh.createdAt)
          const retired = await retireActiveSigningKey(trx, fresh.createdAt)
          await insertSigningKey(trx, fresh)
          await audit.record(trx, {
            type: 'signing_key.rotated',
            actor: OPERATOR,
            target: { kind: 'signing_key', id: fresh.kid },
            details: { alg: fresh.alg, retired_kid: retired ?? null },
            from,
          })
          return retired ?? null
        },
        { wait: true },
      )
      // The log says it too (key ids only), beside the audit row: an operator reads the log first.
      logger.info({ kid: fresh.kid, alg: fresh.alg, retired_kid: retiredKid }, 'signing key rotated')
      // The rotation has committed: a failed reload must not report it failed (the poll reads it again).
      await keySet.reload().catch((err: unknown) => logger.warn({ err }, 'signing keys not reloaded'))
      return publicInfo(fresh)
    },
    /**
     * Emergency removal of a key (leaked): out of the JWKS and refused by introspection at once on
     * this instance, on the others at the notification (or the next poll); a key-revoked event goes
     * out on the revocation feed in the same transaction. The active key is first replaced: by the
     * pending key when there is one (resource servers already have it), else by a new key. 404 for an
     * unknown kid; 409 when the active key cannot be replaced (no key-encryption key to make one).
     */
    async revoke(kid: string, from?: RequestFacts): Promise<RevocationResult> {
      let fresh: StoredSigningKey | undefined
      try {
        fresh = maker.newStoredKey()
      } catch (err) {
        logger.error({ err }, 'no signing key can be made to replace a revoked one')
      }
      const now = clock.now()
      const result = await inSigningKeyLock(
        db,
        async (trx): Promise<RevocationResult | 'unknown' | 'irreplaceable'> => {
          const key = await findSigningKey(trx, kid)
          if (!key) return 'unknown'
          if (key.revokedAt) return { key, changed: false }
          let replacement: SigningKeyInfo | undefined
          if (key.retiredAt === null && !key.pending) {
            const pending = await findPendingSigningKey(trx)
            if (!pending && !fresh) return 'irreplaceable'
            await retireActiveSigningKey(trx, now)
            if (pending) {
              await activatePendingSigningKey(trx, pending.kid, now)
              replacement = { ...publicInfo(pending), pending: false, retiredAt: null, activatesAt: now }
            } else {
              await insertSigningKey(trx, fresh!)
              replacement = publicInfo(fresh!)
            }
          }
          const revoked = await revokeSigningKey(trx, kid, now)
          if (!revoked) throw new Error(`signing key ${kid} not revoked`)
          await audit.record(trx, {
            type: 'signing_key.revoked',
            actor: OPERATOR,
            target: { kind: 'signing_key', id: kid },
            details: { replacement_kid: replacement?.kid ?? null },
            from,
          })
          return { key: revoked, ...(replacement ? { replacement } : {}), changed: true }
        },
        { wait: true },
      )
      if (result === 'unknown') throw new ProblemError(404, 'No signing key with this kid.')
      if (result === 'irreplaceable' || !result)
        throw new ProblemError(
          409,
          'This is the active signing key and no new key can be made to replace it (KEY_ENCRYPTION_KEY is missing); nothing was changed.',
        )
      if (result.changed) {
        // This instance refuses the key at once, whatever the reload below meets.
        keySet.forget(kid)
        await keySet.reload().catch((err: unknown) => logger.warn({ err }, 'signing keys not reloaded'))
        logger.warn({ kid, replacement: result.replacement?.kid }, 'signing key revoked')
      }
      return result
    },
  }
}
