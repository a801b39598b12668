import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT } from '../audit/audit.service.js'
import type { Listen } from '../db/notifications.js'
import type { Clock } from '../lib/clock.js'
import { createPeriodicTask } from '../lib/periodic-task.js'
import { createJwksPublisher } from './jwks.js'
import { KeyEncryptionKeyMissingError, type KeyRing } from './key-encryption.js'
import { createSigner } from './signer.js'
import { createSigningKeyMaker } from './signing-key-maker.js'
import { createSigningKeyRekey, type KeyEncryptionKeyStore } from './signing-key-rekey.js'
import { createSigningKeyRotation } from './signing-key-rotation.js'
import { runSigningKeySchedule, type ScheduleRun } from './signing-key-schedule.js'
import { createSigningKeySet } from './signing-key-set.js'
import { listSigningKeys, type SigningKeyInfo } from './signing-key.repository.js'

export type { SigningKeyInfo }
export type { KeyEncryptionKeyStore, RekeyResult } from './signing-key-rekey.js'
export type { RevocationResult } from './signing-key-rotation.js'
export type { ScheduleRun } from './signing-key-schedule.js'
export type { VerificationKey } from './verification-key.js'

export interface SigningKeyServiceOptions {
  /** How often every instance reads the key set again (notifications make it sooner). */
  pollIntervalMs?: number
  /** How often the rotation schedule looks whether a key is due (one instance acts, under a lock). */
  scheduleIntervalMs?: number
}

export interface SigningKeyDeps {
  db: Kysely<Database>
  clock: Clock
  config: Pick<
    Config,
    'keyEncryptionKey' | 'keyEncryptionKeyPrevious' | 'signingAlg' | 'accessTokenTtl' | 'signingKeyRotation'
  >
  logger: Logger
  /** The database's notifications: a change made by another instance is read at once. */
  listen?: Listen | undefined
  /** Set when the key-encryption key lives in DATA_DIR: a rekey then makes the new key itself. */
  keyEncryptionKeyStore?: KeyEncryptionKeyStore | undefined
  /** Where key changes are recorded (the audit trail); none in tests of the service alone. */
  audit?: AuditRecorder | undefined
}

/**
 * Signing keys: made at first start and by the rotation schedule, private halves encrypted at rest
 * and cached decrypted in memory. The parts, each its own module:
 * - signing-key-set.ts: the key set in memory, read at start, at every notification of a change and
 *   every poll interval, with the trust checks (revocation, the JWKS cut-off) of verification;
 * - signer.ts: the key tokens are signed with, switching to a scheduled key at its time on every
 *   instance without asking the database;
 * - jwks.ts: the published key set; signing-key-schedule.ts and signing-key-rotation.ts: the changes
 *   of which key signs; signing-key-rekey.ts: the private halves under the key-encryption key.
 * This one wires them and runs the timers.
 */
export function createSigningKeyService(deps: SigningKeyDeps, options: SigningKeyServiceOptions = {}) {
  const { db, clock, config, logger } = deps
  const audit = deps.audit ?? NO_AUDIT
  const pollIntervalMs = options.pollIntervalMs ?? 5_000
  const maker = createSigningKeyMaker(config, clock)
  const keySet = createSigningKeySet({
    db,
    clock,
    config,
    logger,
    maker,
    listen: deps.listen,
    pollIntervalMs,
  })
  const signer = createSigner(keySet, clock)
  const jwks = createJwksPublisher(keySet)
  const rotation = createSigningKeyRotation({ db, clock, logger, audit, maker, keySet })
  const rekey = createSigningKeyRekey({
    db,
    logger,
    audit,
    maker,
    keyEncryptionKeyStore: deps.keyEncryptionKeyStore,
  })
  const schedule = createPeriodicTask({
    intervalMs: options.scheduleIntervalMs ?? 60_000,
    run: () =>
      runSigningKeySchedule({ db, clock, config, logger, audit, maker, reload: keySet.reload }).catch(
        (err: unknown) => {
          logger.error({ err }, 'signing key schedule failed')
          throw err
        },
      ),
  })
  let starting: Promise<void> | undefined
  let users = 0

  return {
    /**
     * Loads (or creates) the active key, starts polling, listening and the schedule. Each app calls
     * it; each stop() undoes one. A database that is down at start does not stop the server: the poll
     * loads the key once it answers, and until then signing answers 503. A key that the configured
     * key-encryption keys do not open does stop it (KeyEncryptionKeyMissingError).
     */
    async start(): Promise<void> {
      users++
      if (users === 1) {
        keySet.watch()
        schedule.start()
      }
      starting ??= keySet
        .reload()
        .then(rekey.checkKeyEncryption)
        .catch((err: unknown) => {
          starting = undefined
          if (err instanceof KeyEncryptionKeyMissingError) throw err
          logger.warn({ err }, 'signing keys not loaded yet; retrying at the next poll')
        })
      try {
        await starting
      } catch (err) {
        await this.stop()
        throw err
      }
      // The next key may be due already (a restart after a long stop): the schedule looks now.
      if (config.signingKeyRotation > 0) void schedule.run().catch(() => undefined)
    },
    /** Undoes one start(); the last one stops polling, listening and the schedule. */
    async stop(): Promise<void> {
      users = Math.max(0, users - 1)
      if (users > 0) return
      starting = undefined
      await keySet.stopWatching()
      await schedule.stop()
    },
    /** Reads the key set now if it changed (another instance's rotation or revocation). */
    syncActiveKey: keySet.sync,
    /** Reads the key set now, whatever the poll says. */
    reload: keySet.reload,
    /** One run of the rotation schedule now (the timer runs it every minute on every instance; one acts). */
    runSchedule: (): Promise<ScheduleRun> => schedule.run(),
    activeSigningKey: signer.activeSigningKey,
    nextKey: signer.nextKey,
    listKeys: (): Promise<SigningKeyInfo[]> => listSigningKeys(db),
    isRevoked: keySet.isRevoked,
    isTrusted: keySet.isTrusted,
    verificationKey: keySet.verificationKey,
    publishedJwks: jwks.publishedJwks,
    /** The JWKS's text and ETag, from memory (once a reload under way has ended: keySet.settled). */
    async jwksDocument() {
      await keySet.settled()
      return jwks.document()
    },
    rotate: rotation.rotate,
    revoke: rotation.revoke,
    /** The key-encryption keys in use now (a rekey may replace them); undefined when none is set. */
    keyEncryptionRing: (): KeyRing | undefined => (maker.ringText() ? maker.keyRing() : undefined),
    rekey: rekey.rekey,
  }
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>
