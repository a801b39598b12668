import { createPublicKey, type KeyObject } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { type AuditRecorder, NO_AUDIT, OPERATOR, type RequestFacts, SYSTEM } from '../audit/audit.service.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Listen, StopListening } from '../db/notifications.js'
import { DatabaseUnavailableError, ProblemError } from '../errors.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { isBase64url256Bits } from '../lib/identifiers.js'
import { createPeriodicTask } from '../lib/periodic-task.js'
import type { ActiveSigningKey } from './access-token.js'
import {
  decryptWithRing,
  encryptPrivateKey,
  KeyEncryptionKeyMissingError,
  type KeyRing,
  keyRingFrom,
} from './key-encryption.js'
import { generateSigningKey, loadPrivateKey, type SigningAlg } from './key-material.js'
import {
  activatePendingSigningKey,
  findActiveSigningKey,
  findEncryptedKeyForUpdate,
  findPendingSigningKey,
  findSigningKey,
  findSigningKeyState,
  findVerificationSigningKey,
  inSigningKeyLock,
  insertPendingSigningKey,
  insertSigningKey,
  listKeyEncryptionIds,
  listPublishedSigningKeys,
  listSigningCandidates,
  listSigningKeys,
  retireActiveSigningKey,
  retirePendingSigningKeys,
  revokeSigningKey,
  SIGNING_KEYS_CHANNEL,
  type SigningKeyInfo,
  type StoredSigningKey,
  updateEncryptedKey,
} from './signing-key.repository.js'

export type { SigningKeyInfo }

export interface SigningKeyServiceOptions {
  /** How often every instance reads the key set again (notifications make it sooner). */
  pollIntervalMs?: number
  /** How often the rotation schedule looks whether a key is due (one instance acts, under a lock). */
  scheduleIntervalMs?: number
}

/**
 * Resource servers may cache the JWKS this long (its Cache-Control max-age); jose's remote key set
 * also refetches when it meets an unknown kid, so a short max-age is enough. A key made by the
 * schedule is published at least this long, plus a poll and a margin, before it signs.
 */
export const JWKS_MAX_AGE_SECONDS = 60

/**
 * A retired key stays published for a token lifetime plus this margin: other instances may go on
 * signing with it until their next poll, and resource servers' clocks drift.
 */
const PUBLISH_MARGIN_SECONDS = 60

/** The least time a scheduled key is published before it signs: a JWKS cache lifetime, a poll, a margin. */
const MIN_LEAD_SECONDS = JWKS_MAX_AGE_SECONDS + 5 + PUBLISH_MARGIN_SECONDS

/**
 * How long before its time the schedule makes (and publishes) the next key: half the rotation period,
 * at most a day, never less than MIN_LEAD_SECONDS. A day gives resource servers that cache the JWKS
 * far longer than they are told every chance to have the key before its first token.
 */
export function nextKeyLeadSeconds(rotationSeconds: number): number {
  return Math.max(MIN_LEAD_SECONDS, Math.min(rotationSeconds / 2, 24 * 3600))
}

/** A public key we signed with, ready for node:crypto verify (imported once, never per request). */
export interface VerificationKey {
  kid: string
  alg: SigningAlg
  publicKey: KeyObject
  /** When it stopped signing (ms since the epoch); null while it may sign. */
  retiredAt: number | null
}

/** What a key-encryption-key store offers when the server keeps the key itself (runtime-secrets.ts). */
export interface KeyEncryptionKeyStore {
  replace(current: string): { current: string; previous: string }
  forgetPrevious(): void
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

/** What one run of the schedule did; busy: another instance held the lock. */
export interface ScheduleRun {
  outcome: 'done' | 'busy'
  /** The key made and published ahead of its use, and when it will sign. */
  prepared?: { kid: string; activatesAt: Date }
  /** The pending key that became the active one. */
  activated?: string
}

export interface RevocationResult {
  key: SigningKeyInfo
  /** The key that signs from now on, when the revoked key was the active one. */
  replacement?: SigningKeyInfo
  /** False when the key had been revoked before (nothing changed). */
  changed: boolean
}

export interface RekeyResult {
  /** The id of the key-encryption key every private key is now under (never the key). */
  kekId: string
  /** True when the server made the new key-encryption key itself (kept in DATA_DIR). */
  generated: boolean
  rekeyed: number
  alreadyCurrent: number
  /** Keys that neither configured key-encryption key opens: they stay as they are. */
  unreadable: string[]
}

interface Signer extends ActiveSigningKey {
  verification: VerificationKey
}

/**
 * Signing keys: made at first start and by the rotation schedule, private halves encrypted at rest
 * and cached decrypted in memory. Every instance reads which key is active and which is next from the
 * database (at start, at every notification of a change, and every poll interval); the switch to a
 * scheduled key happens on every instance at the key's activation time, read from the database, so
 * that all of them sign with the same key without asking the database per token.
 */
export function createSigningKeyService(deps: SigningKeyDeps, options: SigningKeyServiceOptions = {}) {
  const { db, clock, config, logger } = deps
  const audit = deps.audit ?? NO_AUDIT
  const pollIntervalMs = options.pollIntervalMs ?? 5_000
  let ringText: { current: string; previous?: string | undefined } | undefined = config.keyEncryptionKey
    ? { current: config.keyEncryptionKey, previous: config.keyEncryptionKeyPrevious }
    : undefined
  let ring: KeyRing | undefined
  let active: Signer | undefined
  /** The pending key and when it signs (ms): every instance switches to it then. */
  let next: { signer: Signer; activatesAt: number } | undefined
  let starting: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined
  let stopListening: Promise<StopListening | undefined> | undefined
  let users = 0
  let state: string | undefined
  let published: { keys: SigningKeyInfo[]; loadedAt: number } | undefined
  let verificationKeys = new Map<string, VerificationKey>()
  let revokedKids = new Set<string>()
  let loading: Promise<void> | undefined
  let rekeying: Promise<unknown> | undefined
  const schedule = createPeriodicTask({
    intervalMs: options.scheduleIntervalMs ?? 60_000,
    run: () =>
      runSchedule().catch((err: unknown) => {
        logger.error({ err }, 'signing key schedule failed')
        throw err
      }),
  })

  function keyRing(): KeyRing {
    if (!ringText) throw new Error('KEY_ENCRYPTION_KEY is not set')
    ring ??= keyRingFrom(ringText.current, ringText.previous)
    return ring
  }

  function toVerificationKey(
    k: Pick<SigningKeyInfo, 'kid' | 'alg' | 'publicJwk' | 'retiredAt'>,
  ): VerificationKey {
    const publicKey = createPublicKey({ key: k.publicJwk as never, format: 'jwk' })
    return { kid: k.kid, alg: k.alg as SigningAlg, publicKey, retiredAt: k.retiredAt?.getTime() ?? null }
  }

  /**
   * Whether tokens of this key may still be alive: not revoked, and not retired before the JWKS
   * cut-off (a token lifetime plus PUBLISH_MARGIN_SECONDS ago), read on every call, so a key in memory
   * leaves on the second it leaves the JWKS, on every instance. The active key counts as retired from
   * the moment a due pending key replaced it, even before a reload says so.
   */
  function trusted(key: VerificationKey): boolean {
    if (revokedKids.has(key.kid)) return false
    const n = next
    const replacedAt =
      key.retiredAt ?? (n && n.signer.kid !== key.kid && key.kid === active?.kid ? n.activatesAt : null)
    return replacedAt === null || replacedAt > publishedCutoff().getTime()
  }

  /** Decrypts a stored key, reusing what is already in memory for the same kid. */
  function signerOf(stored: StoredSigningKey): Signer {
    for (const known of [active, next?.signer]) if (known?.kid === stored.kid) return known
    const { pem } = decryptWithRing(stored, keyRing())
    return {
      kid: stored.kid,
      alg: stored.alg as SigningAlg,
      privateKey: loadPrivateKey(pem),
      verification: toVerificationKey(stored),
    }
  }

  function newStoredKey(): StoredSigningKey {
    const key = generateSigningKey(config.signingAlg)
    const kek = keyRing().current
    const now = clock.now()
    return {
      kid: key.kid,
      alg: key.alg,
      publicJwk: key.publicJwk,
      privateKeyEncrypted: encryptPrivateKey(key.privateKeyPem, kek.key, key.kid),
      kekId: kek.id,
      createdAt: now,
      retiredAt: null,
      pending: false,
      activatesAt: now,
      revokedAt: null,
    }
  }

  const info = ({ privateKeyEncrypted: _secret, ...rest }: StoredSigningKey): SigningKeyInfo => rest

  function publishedCutoff(): Date {
    return new Date(clock.now().getTime() - (config.accessTokenTtl + PUBLISH_MARGIN_SECONDS) * 1000)
  }

  /**
   * Reads the key set: the active key (made when there is none; two instances racing meet at the
   * unique index), the pending one, the public keys tokens may carry, the revoked kids. Replaces what
   * is in memory only once all of it is read and decrypted.
   */
  async function readKeySet(): Promise<void> {
    let stored = await findActiveSigningKey(db)
    if (!stored) {
      try {
        await insertSigningKey(db, newStoredKey())
      } catch (err) {
        if (!isUniqueViolation(err)) throw err // another instance created one first: use theirs
      }
      stored = await findActiveSigningKey(db)
      if (!stored) throw new Error('no active signing key after creating one')
    }
    const nextState = await findSigningKeyState(db)
    const pending = await findPendingSigningKey(db)
    const rows = await listPublishedSigningKeys(db, publishedCutoff())
    const revoked = (await listSigningKeys(db)).filter((k) => k.revokedAt !== null).map((k) => k.kid)
    const activeSigner = signerOf(stored)
    const nextSigner = pending && { signer: signerOf(pending), activatesAt: pending.activatesAt.getTime() }
    const keys = new Map<string, VerificationKey>()
    for (const k of rows) if (!k.pending) keys.set(k.kid, toVerificationKey(k))
    active = activeSigner
    next = nextSigner
    verificationKeys = keys
    revokedKids = new Set(revoked)
    published = undefined
    state = nextState
  }

  /** One read at a time; a caller arriving during one waits for a fresh one after it. */
  function reload(): Promise<void> {
    const previous = loading
    const current: Promise<void> = (async () => {
      await previous?.catch(() => undefined)
      await readKeySet()
    })().finally(() => {
      if (loading === current) loading = undefined
    })
    loading = current
    return current
  }

  /** The poll: one small query; the key set is read again only when it changed. */
  async function sync(): Promise<void> {
    if ((await findSigningKeyState(db)) !== state) await reload()
  }

  let checking: Promise<void> | undefined
  let checkQueued: Promise<void> | undefined
  /**
   * sync() begun after the caller asked, shared by every caller that asks meanwhile: one query at a
   * time however many ask, and none is answered from a check that began before it asked.
   */
  function syncSinceNow(): Promise<void> {
    if (!checking) {
      checking = sync().finally(() => {
        checking = undefined
      })
      return checking
    }
    checkQueued ??= checking
      .catch(() => undefined)
      .then(() => {
        checkQueued = undefined
        return syncSinceNow()
      })
    return checkQueued
  }

  function reportSyncFailure(err: unknown): void {
    if (err instanceof KeyEncryptionKeyMissingError)
      logger.error({ err: err.message }, 'a signing key cannot be decrypted; signing with the keys in memory')
    else logger.warn({ err }, 'signing key poll failed')
  }

  /**
   * At start: every key the server may sign with must open with the configured key-encryption keys
   * (a wrong KEY_ENCRYPTION_KEY stops the start with a clear error, see main.ts); other keys that do
   * not are only named in the log, since nothing needs their private half.
   */
  async function checkKeyEncryption(): Promise<void> {
    const r = keyRing()
    for (const stored of await listSigningCandidates(db)) decryptWithRing(stored, r)
    const stale = (await listKeyEncryptionIds(db)).filter(
      (k) => !k.needed && k.kekId !== null && k.kekId !== r.current.id && k.kekId !== r.previous?.id,
    )
    if (stale.length > 0)
      logger.warn(
        { kids: stale.map((k) => k.kid) },
        'retired signing keys are under a key-encryption key no longer configured (they never sign again)',
      )
  }

  async function runSchedule(): Promise<ScheduleRun> {
    const now = clock.now()
    const rotation = config.signingKeyRotation
    // Kept across a retry of the transaction (a serialization conflict): one key made per run at most.
    let fresh: StoredSigningKey | undefined
    const result = await inSigningKeyLock(
      db,
      async (trx) => {
        const run: ScheduleRun = { outcome: 'done' }
        let pending = await findPendingSigningKey(trx)
        if (pending && pending.activatesAt <= now) {
          const retired = await retireActiveSigningKey(trx, pending.activatesAt)
          await activatePendingSigningKey(trx, pending.kid, pending.activatesAt)
          await audit.record(trx, {
            type: 'signing_key.rotated',
            actor: SYSTEM,
            target: { kind: 'signing_key', id: pending.kid },
            details: {
              alg: pending.alg,
              retired_kid: retired ?? null,
              scheduled: true,
              activates_at: pending.activatesAt.toISOString(),
            },
          })
          run.activated = pending.kid
          pending = undefined
        }
        const current = await findActiveSigningKey(trx)
        if (rotation > 0 && !pending && current) {
          const due = addSeconds(current.activatesAt, rotation)
          const lead = nextKeyLeadSeconds(rotation)
          if (now.getTime() >= due.getTime() - lead * 1000) {
            const activatesAt = new Date(Math.max(due.getTime(), addSeconds(now, lead).getTime()))
            fresh ??= newStoredKey()
            await insertPendingSigningKey(trx, fresh, activatesAt)
            await audit.record(trx, {
              type: 'signing_key.prepared',
              actor: SYSTEM,
              target: { kind: 'signing_key', id: fresh.kid },
              details: { alg: fresh.alg, activates_at: activatesAt.toISOString() },
            })
            run.prepared = { kid: fresh.kid, activatesAt }
          }
        }
        return run
      },
      { wait: false },
    )
    if (!result) return { outcome: 'busy' }
    if (result.prepared || result.activated) {
      logger.info(
        {
          prepared: result.prepared && {
            kid: result.prepared.kid,
            activatesAt: result.prepared.activatesAt.toISOString(),
          },
          activated: result.activated,
        },
        'signing key schedule',
      )
      await reload()
    }
    return result
  }

  /**
   * Re-encrypts every private key under the current key-encryption key, each row in a short
   * transaction of its own (the service keeps signing). With the key in DATA_DIR and every row
   * under it already, a new key is made first (keyEncryptionKeyStore). Idempotent: a row already
   * under the current key is left alone, and a run stopped half way is finished by the next.
   */
  async function rekeyAll(from: RequestFacts | undefined): Promise<RekeyResult> {
    let generated = false
    const store = deps.keyEncryptionKeyStore
    if (store && ringText) {
      const current = keyRing().current.id
      if ((await listKeyEncryptionIds(db)).every((k) => k.kekId === current)) {
        ringText = store.replace(ringText.current)
        ring = undefined
        generated = true
        logger.info({ kekId: keyRing().current.id }, 'new key-encryption key made in DATA_DIR')
      }
    }
    const r = keyRing()
    const result: RekeyResult = {
      kekId: r.current.id,
      generated,
      rekeyed: 0,
      alreadyCurrent: 0,
      unreadable: [],
    }
    for (const { kid, kekId } of await listKeyEncryptionIds(db)) {
      if (kekId === r.current.id) {
        result.alreadyCurrent++
        continue
      }
      const outcome = await db.transaction().execute(async (trx) => {
        const stored = await findEncryptedKeyForUpdate(trx, kid)
        if (!stored || stored.kekId === r.current.id) return 'current'
        let pem: string
        try {
          pem = decryptWithRing(stored, r).pem
        } catch (err) {
          if (err instanceof KeyEncryptionKeyMissingError) return 'unreadable'
          throw err
        }
        await updateEncryptedKey(trx, kid, encryptPrivateKey(pem, r.current.key, kid), r.current.id)
        // Key-encryption keys are named by their id (a fingerprint), never by their value.
        await audit.record(trx, {
          type: 'signing_key.rekeyed',
          actor: OPERATOR,
          target: { kind: 'signing_key', id: kid },
          details: { kek_id: r.current.id, previous_kek_id: stored.kekId },
          from,
        })
        return 'rekeyed'
      })
      if (outcome === 'rekeyed') result.rekeyed++
      else if (outcome === 'current') result.alreadyCurrent++
      else result.unreadable.push(kid)
    }
    if (store && result.unreadable.length === 0) store.forgetPrevious()
    logger.info(
      { kekId: result.kekId, rekeyed: result.rekeyed, unreadable: result.unreadable },
      'signing keys re-encrypted',
    )
    return result
  }

  return {
    /**
     * Loads (or creates) the active key, starts polling, listening and the schedule. Each app calls
     * it; each stop() undoes one. A database that is down at start does not stop the server: the poll
     * loads the key once it answers, and until then signing answers 503. A key that the configured
     * key-encryption keys do not open does stop it (KeyEncryptionKeyMissingError).
     */
    async start(): Promise<void> {
      users++
      if (!timer) {
        timer = setInterval(() => sync().catch(reportSyncFailure), pollIntervalMs)
        timer.unref()
        stopListening = deps
          .listen?.(SIGNING_KEYS_CHANNEL, {
            notify: () => void sync().catch(reportSyncFailure),
            listening: () => void sync().catch(reportSyncFailure),
            lost: (err) =>
              logger.warn({ err, pollIntervalMs }, 'signing key listener lost; polling meanwhile'),
          })
          .catch((err: unknown) => {
            logger.warn({ err }, 'signing key listener not started; polling only')
            return undefined
          })
        schedule.start()
      }
      starting ??= reload()
        .then(checkKeyEncryption)
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
      if (timer) clearInterval(timer)
      timer = undefined
      starting = undefined
      const stopped = stopListening
      stopListening = undefined
      await (
        await stopped
      )?.()
      await schedule.stop()
    },
    /** Reads the key set now if it changed (another instance's rotation or revocation). */
    syncActiveKey: sync,
    /** Reads the key set now, whatever the poll says. */
    reload,
    /** One run of the rotation schedule now (the timer runs it every minute on every instance; one acts). */
    runSchedule: () => schedule.run(),
    /**
     * The key that signs now: the pending key once its time has come (every instance switches at the
     * same time, without asking the database), else the active one. No query: this is the hot path.
     */
    activeSigningKey(): ActiveSigningKey {
      const n = next
      if (n && clock.now().getTime() >= n.activatesAt) return n.signer
      if (!active) throw new DatabaseUnavailableError('signing keys are not loaded yet')
      return active
    },
    /** The pending key, if any, and when it signs. */
    nextKey(): { kid: string; activatesAt: Date } | undefined {
      return next && { kid: next.signer.kid, activatesAt: new Date(next.activatesAt) }
    },
    listKeys: (): Promise<SigningKeyInfo[]> => listSigningKeys(db),
    /** A revoked key's tokens verify nowhere, whatever a cache remembers (memory; see reload). */
    isRevoked: (kid: string): boolean => revokedKids.has(kid),
    /**
     * Whether a token of this kid, remembered as verified, may still be trusted: the key is known,
     * not revoked, and not retired past the JWKS cut-off (memory only: the hot path).
     */
    isTrusted(kid: string): boolean {
      const key =
        verificationKeys.get(kid) ?? (next?.signer.kid === kid ? next.signer.verification : undefined)
      return key !== undefined && trusted(key)
    },
    /**
     * The public key a token names by kid, from memory. An unknown kid of the right shape costs one
     * primary-key lookup, so a key made by a rotation on another instance is found before the next
     * poll; callers are authenticated resource servers or identified clients.
     */
    async verificationKey(kid: string): Promise<VerificationKey | undefined> {
      if (revokedKids.has(kid)) return undefined
      const known = verificationKeys.get(kid)
      if (known) return trusted(known) ? known : undefined
      const n = next
      if (n && n.signer.kid === kid && clock.now().getTime() >= n.activatesAt) return n.signer.verification
      // A kid is a base64url RFC 7638 thumbprint; anything else is looked up nowhere.
      if (!isBase64url256Bits(kid)) return undefined
      const stored = await findVerificationSigningKey(db, kid, publishedCutoff(), clock.now())
      if (!stored || revokedKids.has(kid)) return undefined
      const key = toVerificationKey(stored)
      if (!trusted(key)) return undefined
      verificationKeys = new Map(verificationKeys).set(kid, key)
      return key
    },
    /** Public JWKs of the keys whose tokens may be alive or are about to be (RFC 7517 key set members). */
    async publishedJwks(): Promise<Record<string, unknown>[]> {
      // A rotation on another instance signs at once: its key must be here before a resource server,
      // meeting the new kid, refetches the key set from this instance. The notification may not have
      // arrived yet, so the state is checked (one small query, shared by requests arriving together);
      // the key set is read again only when it changed. Unreachable database: the keys in memory.
      await syncSinceNow().catch(reportSyncFailure)
      const now = clock.now().getTime()
      const cutoff = publishedCutoff().getTime()
      // The rows are kept for one poll interval (the JWKS is asked for often and changes only at a
      // rotation; a change anywhere is notified and drops them); the cut-off is applied on every
      // call, so a retired key leaves on the second.
      if (!published || now - published.loadedAt >= pollIntervalMs || now < published.loadedAt) {
        published = { keys: await listPublishedSigningKeys(db, new Date(cutoff)), loadedAt: now }
      }
      return published.keys
        .filter((k) => !revokedKids.has(k.kid))
        .filter((k) => k.pending || k.retiredAt === null || k.retiredAt.getTime() > cutoff)
        .map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg, use: 'sig' }))
    },
    /**
     * Retires the active key and makes a new one active, in one locked transaction; signs with it from
     * now on. A key waiting in the schedule is dropped: the schedule starts again from this one.
     */
    async rotate(from?: RequestFacts): Promise<SigningKeyInfo> {
      const fresh = newStoredKey()
      await inSigningKeyLock(
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
        },
        { wait: true },
      )
      // The rotation has committed: a failed reload must not report it failed (the poll reads it again).
      await reload().catch((err: unknown) => logger.warn({ err }, 'signing keys not reloaded'))
      return info(fresh)
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
        fresh = newStoredKey()
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
              replacement = { ...info(pending), pending: false, retiredAt: null, activatesAt: now }
            } else {
              await insertSigningKey(trx, fresh!)
              replacement = info(fresh!)
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
        revokedKids = new Set(revokedKids).add(kid)
        const remaining = new Map(verificationKeys)
        remaining.delete(kid)
        verificationKeys = remaining
        published = undefined
        await reload().catch((err: unknown) => logger.warn({ err }, 'signing keys not reloaded'))
        logger.warn({ kid, replacement: result.replacement?.kid }, 'signing key revoked')
      }
      return result
    },
    /** The key-encryption keys in use now (a rekey may replace them); undefined when none is set. */
    keyEncryptionRing: (): KeyRing | undefined => (ringText ? keyRing() : undefined),
    /** Every private key under the current key-encryption key (rekeyAll above). */
    rekey(from?: RequestFacts): Promise<RekeyResult> {
      // One at a time in this process: two runs at once in embedded mode would each make a new key.
      const previous = rekeying
      const run = (async () => {
        await previous?.catch(() => undefined)
        return rekeyAll(from)
      })()
      rekeying = run
      return run
    },
  }
}
