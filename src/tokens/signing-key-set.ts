import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Listen, StopListening } from '../db/notifications.js'
import { DatabaseUnavailableError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import { isBase64url256Bits } from '../lib/identifiers.js'
import { decryptWithRing, KeyEncryptionKeyMissingError } from './key-encryption.js'
import { loadPrivateKey, type SigningAlg } from './key-material.js'
import type { SigningKeyMaker } from './signing-key-maker.js'
import {
  findActiveSigningKey,
  findPendingSigningKey,
  findSigningKeyState,
  insertSigningKey,
  listPublishedSigningKeys,
  listSigningKeys,
  SIGNING_KEYS_CHANNEL,
  type SigningKeyInfo,
  type StoredSigningKey,
} from './signing-key.repository.js'
import { publishedCutoff, type Signer, toVerificationKey, type VerificationKey } from './verification-key.js'

export interface SigningKeySetDeps {
  db: Kysely<Database>
  clock: Clock
  config: Pick<Config, 'accessTokenTtl'>
  logger: Logger
  maker: SigningKeyMaker
  /** The database's notifications: a change made by another instance is read at once. */
  listen?: Listen | undefined
  /** How often the key set is read again when nothing was notified. */
  pollIntervalMs: number
}

/**
 * The signing keys as every instance holds them in memory: the active key and the pending one
 * (decrypted), the public keys tokens may carry and the JWKS's rows, the revoked kids. Read from the
 * database at start, at every notification of a change, and every poll interval; signing, the JWKS and
 * the verification of a known kid never ask the database.
 * The trust checks (revocation, the JWKS cut-off) are applied on every call.
 */
export function createSigningKeySet(deps: SigningKeySetDeps) {
  const { db, clock, config, logger, maker, pollIntervalMs } = deps
  let active: Signer | undefined
  /** The pending key and when it signs (ms): every instance switches to it then. */
  let next: { signer: Signer; activatesAt: number } | undefined
  let state: string | undefined
  let verificationKeys = new Map<string, VerificationKey>()
  /** The rows of the JWKS as last read (the active, pending and recently retired keys). */
  let published: SigningKeyInfo[] | undefined
  let revokedKids = new Set<string>()
  /** Counts the reads of the key set; what is derived from it is kept while it stays the same. */
  let generation = 0
  let loading: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined
  let stopListening: Promise<StopListening | undefined> | undefined

  const cutoff = () => publishedCutoff(clock, config.accessTokenTtl)

  /**
   * Whether tokens of this key may still be alive: not revoked, and not retired before the JWKS
   * cut-off, read on every call, so a key in memory leaves on the second it leaves the JWKS, on every
   * instance. The active key counts as retired from the moment a due pending key replaced it, even
   * before a reload says so.
   */
  function trusted(key: VerificationKey): boolean {
    if (revokedKids.has(key.kid)) return false
    const n = next
    const replacedAt =
      key.retiredAt ?? (n && n.signer.kid !== key.kid && key.kid === active?.kid ? n.activatesAt : null)
    return replacedAt === null || replacedAt > cutoff().getTime()
  }

  /** A kid's key from memory: undefined when it is not trusted, 'unknown' when it was never read. */
  function inMemory(kid: string): VerificationKey | undefined | 'unknown' {
    if (revokedKids.has(kid)) return undefined
    const known = verificationKeys.get(kid)
    if (known) return trusted(known) ? known : undefined
    const n = next
    if (n && n.signer.kid === kid && clock.now().getTime() >= n.activatesAt) return n.signer.verification
    return 'unknown'
  }

  /** Decrypts a stored key, reusing what is already in memory for the same kid. */
  function signerOf(stored: StoredSigningKey): Signer {
    for (const known of [active, next?.signer]) if (known?.kid === stored.kid) return known
    const { pem } = decryptWithRing(stored, maker.keyRing())
    return {
      kid: stored.kid,
      alg: stored.alg as SigningAlg,
      privateKey: loadPrivateKey(pem),
      verification: toVerificationKey(stored),
    }
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
        await insertSigningKey(db, maker.newStoredKey())
      } catch (err) {
        if (!isUniqueViolation(err)) throw err // another instance created one first: use theirs
      }
      stored = await findActiveSigningKey(db)
      if (!stored) throw new Error('no active signing key after creating one')
    }
    const nextState = await findSigningKeyState(db)
    const pending = await findPendingSigningKey(db)
    const rows = await listPublishedSigningKeys(db, cutoff())
    const revoked = (await listSigningKeys(db)).filter((k) => k.revokedAt !== null).map((k) => k.kid)
    const activeSigner = signerOf(stored)
    const nextSigner = pending && { signer: signerOf(pending), activatesAt: pending.activatesAt.getTime() }
    const keys = new Map<string, VerificationKey>()
    for (const k of rows) if (!k.pending) keys.set(k.kid, toVerificationKey(k))
    active = activeSigner
    next = nextSigner
    verificationKeys = keys
    published = rows
    revokedKids = new Set(revoked)
    generation++
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

  return {
    reload,
    sync,
    /**
     * Resolves once a reload under way has ended (at once when none is): a rotation or revocation
     * made here reloads right after its commit, and the JWKS waits for that reload, so that a
     * resource server told of the change by the feed never fetches the key set from before it.
     */
    settled: (): Promise<void> => loading?.catch(() => undefined) ?? Promise.resolve(),
    /** Starts the poll and the listener (once; see stopWatching). */
    watch(): void {
      if (timer) return
      timer = setInterval(() => sync().catch(reportSyncFailure), pollIntervalMs)
      timer.unref()
      stopListening = deps
        .listen?.(SIGNING_KEYS_CHANNEL, {
          notify: () => void sync().catch(reportSyncFailure),
          listening: () => void sync().catch(reportSyncFailure),
          lost: (err) => logger.warn({ err, pollIntervalMs }, 'signing key listener lost; polling meanwhile'),
        })
        .catch((err: unknown) => {
          logger.warn({ err }, 'signing key listener not started; polling only')
          return undefined
        })
    },
    async stopWatching(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = undefined
      const stopped = stopListening
      stopListening = undefined
      await (
        await stopped
      )?.()
    },
    /** The active key and the pending one, as last read (undefined before the first read). */
    signers: () => ({ active, next }),
    /** Changes at every read of the key set and every local forget(). */
    generation: () => generation,
    /** A revoked key's tokens verify nowhere, whatever a cache remembers. */
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
     * The public key a token names by kid, from memory. A kid this instance has not read may be a
     * key rotated in on another instance whose notification is still on its way: for a kid of the
     * right shape the key set's state is checked (syncSinceNow: one small query at a time, shared by
     * every caller meanwhile) and the set read again if it changed; callers are authenticated
     * resource servers or identified clients. Known kids never ask the database.
     */
    async verificationKey(kid: string): Promise<VerificationKey | undefined> {
      const known = inMemory(kid)
      if (known !== 'unknown') return known
      // A kid is a base64url RFC 7638 thumbprint; anything else is looked up nowhere.
      if (!isBase64url256Bits(kid)) return undefined
      await syncSinceNow().catch((err: unknown) => {
        // A key this instance cannot decrypt is reported, not answered as a failure of this call.
        if (!(err instanceof KeyEncryptionKeyMissingError)) throw err
        reportSyncFailure(err)
      })
      const found = inMemory(kid)
      return found === 'unknown' ? undefined : found
    },
    /**
     * The keys of the JWKS now, from memory: the active and pending keys and the retired ones not
     * past the cut-off (applied on every call, so a retired key leaves on the second), never a revoked
     * one. Throws DatabaseUnavailableError before the key set was ever read.
     */
    publishedKeys(): SigningKeyInfo[] {
      if (!published) throw new DatabaseUnavailableError('signing keys are not loaded yet')
      const since = cutoff().getTime()
      return published.filter(
        (k) =>
          !revokedKids.has(k.kid) && (k.pending || k.retiredAt === null || k.retiredAt.getTime() > since),
      )
    },
    /** This instance refuses a key it has just revoked at once, whatever the reload after meets. */
    forget(kid: string): void {
      revokedKids = new Set(revokedKids).add(kid)
      const remaining = new Map(verificationKeys)
      remaining.delete(kid)
      verificationKeys = remaining
      generation++
    },
  }
}

export type SigningKeySet = ReturnType<typeof createSigningKeySet>
