import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import type { Listen } from '../db/notifications.js'
import type { Clock } from '../lib/clock.js'
import { isBase64url256Bits } from '../lib/identifiers.js'
import { KeyEncryptionKeyMissingError } from './key-encryption.js'
import {
  inMemory,
  isTrusted,
  type KeySetMemory,
  nothingRead,
  publishedKeys,
  type TrustClock,
  withoutKey,
} from './signing-key-memory.js'
import { readKeySet } from './signing-key-read.js'
import type { SigningKeyMaker } from './signing-key-maker.js'
import { reportSyncFailure, watchSigningKeys } from './signing-key-watch.js'
import { findSigningKeyState, type SigningKeyInfo } from './signing-key.repository.js'
import { publishedCutoff, type Signer, type VerificationKey } from './verification-key.js'

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
 *
 * This is the wiring: what is in memory and its trust checks are signing-key-memory.ts's, the read
 * of the key set signing-key-read.ts's, the poll and the listener signing-key-watch.ts's; here, when
 * to read (one read at a time, one state query at a time however many ask).
 */
export function createSigningKeySet(deps: SigningKeySetDeps) {
  const { db, clock, config, logger, maker, pollIntervalMs } = deps
  let memory: KeySetMemory = nothingRead()
  let loading: Promise<void> | undefined
  let stopWatch: (() => Promise<void>) | undefined

  const cutoff = () => publishedCutoff(clock, config.accessTokenTtl)
  const time: TrustClock = { clock, cutoff }

  /** Reads the key set; what is in memory is replaced only once all of it is read and decrypted. */
  async function read(): Promise<void> {
    const fresh = await readKeySet({ db, maker, cutoff }, () => [memory.active, memory.next?.signer])
    memory = { ...fresh, generation: memory.generation + 1 }
  }

  /** One read at a time; a caller arriving during one waits for a fresh one after it. */
  function reload(): Promise<void> {
    const previous = loading
    const current: Promise<void> = (async () => {
      await previous?.catch(() => undefined)
      await read()
    })().finally(() => {
      if (loading === current) loading = undefined
    })
    loading = current
    return current
  }

  /** The poll: one small query; the key set is read again only when it changed. */
  async function sync(): Promise<void> {
    if ((await findSigningKeyState(db)) !== memory.state) await reload()
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
      stopWatch ??= watchSigningKeys({ sync, logger, listen: deps.listen, pollIntervalMs })
    },
    async stopWatching(): Promise<void> {
      const stop = stopWatch
      stopWatch = undefined
      await stop?.()
    },
    /** The active key and the pending one, as last read (undefined before the first read). */
    signers: (): {
      active: Signer | undefined
      next: { signer: Signer; activatesAt: number } | undefined
    } => ({
      active: memory.active,
      next: memory.next,
    }),
    /** Changes at every read of the key set and every local forget(). */
    generation: (): number => memory.generation,
    /** A revoked key's tokens verify nowhere, whatever a cache remembers. */
    isRevoked: (kid: string): boolean => memory.revokedKids.has(kid),
    /**
     * Whether a token of this kid, remembered as verified, may still be trusted: the key is known,
     * not revoked, and not retired past the JWKS cut-off (memory only: the hot path).
     */
    isTrusted: (kid: string): boolean => isTrusted(memory, time, kid),
    /**
     * The public key a token names by kid, from memory. A kid this instance has not read may be a
     * key rotated in on another instance whose notification is still on its way: for a kid of the
     * right shape the key set's state is checked (syncSinceNow: one small query at a time, shared by
     * every caller meanwhile) and the set read again if it changed; callers are authenticated
     * resource servers or identified clients. Known kids never ask the database.
     */
    async verificationKey(kid: string): Promise<VerificationKey | undefined> {
      const known = inMemory(memory, time, kid)
      if (known !== 'unknown') return known
      // A kid is a base64url RFC 7638 thumbprint; anything else is looked up nowhere.
      if (!isBase64url256Bits(kid)) return undefined
      await syncSinceNow().catch((err: unknown) => {
        // A key this instance cannot decrypt is reported, not answered as a failure of this call.
        if (!(err instanceof KeyEncryptionKeyMissingError)) throw err
        reportSyncFailure(logger, err)
      })
      const found = inMemory(memory, time, kid)
      return found === 'unknown' ? undefined : found
    },
    /**
     * The keys of the JWKS now, from memory: the active and pending keys and the retired ones not
     * past the cut-off (applied on every call, so a retired key leaves on the second), never a revoked
     * one. Throws DatabaseUnavailableError before the key set was ever read.
     */
    publishedKeys: (): SigningKeyInfo[] => publishedKeys(memory, time),
    /** This instance refuses a key it has just revoked at once, whatever the reload after meets. */
    forget(kid: string): void {
      memory = withoutKey(memory, kid)
    },
  }
}

export type SigningKeySet = ReturnType<typeof createSigningKeySet>
