import { createPublicKey, type KeyObject } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import { DatabaseUnavailableError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import { isBase64url256Bits } from '../lib/identifiers.js'
import type { ActiveSigningKey } from './access-token.js'
import { decryptPrivateKey, encryptPrivateKey, parseKeyEncryptionKey } from './key-encryption.js'
import { generateSigningKey, loadPrivateKey, type SigningAlg } from './key-material.js'
import {
  findActiveKid,
  findActiveSigningKey,
  findPublishedSigningKey,
  insertSigningKey,
  listPublishedSigningKeys,
  listSigningKeys,
  retireActiveSigningKey,
  type SigningKeyInfo,
  type StoredSigningKey,
} from './signing-key.repository.js'

export type { SigningKeyInfo }

export interface SigningKeyServiceOptions {
  /** How often every instance looks for a rotation made elsewhere. */
  pollIntervalMs?: number
}

/**
 * A retired key stays published for a token lifetime plus this margin: other instances may go on
 * signing with it until their next poll, and resource servers' clocks drift.
 */
const PUBLISH_MARGIN_SECONDS = 60

/** A public key we signed with, ready for node:crypto verify (imported once, never per request). */
export interface VerificationKey {
  kid: string
  alg: SigningAlg
  publicKey: KeyObject
}

export interface SigningKeyDeps {
  db: Kysely<Database>
  clock: Clock
  config: Pick<Config, 'keyEncryptionKey' | 'signingAlg' | 'accessTokenTtl'>
  logger: Logger
}

/**
 * Signing keys: made at first start, private halves encrypted at rest and cached decrypted in
 * memory, the active kid polled so that a rotation on any instance reaches every instance.
 */
export function createSigningKeyService(deps: SigningKeyDeps, options: SigningKeyServiceOptions = {}) {
  const { db, clock, config, logger } = deps
  const pollIntervalMs = options.pollIntervalMs ?? 5_000
  let encryptionKey: Buffer | undefined
  let active: ActiveSigningKey | undefined
  let starting: Promise<void> | undefined
  let timer: NodeJS.Timeout | undefined
  let users = 0
  let published: { keys: SigningKeyInfo[]; loadedAt: number } | undefined
  let verificationKeys = new Map<string, VerificationKey>()
  let reloadingVerificationKeys: Promise<void> | undefined

  function keyEncryptionKey(): Buffer {
    if (!config.keyEncryptionKey) throw new Error('KEY_ENCRYPTION_KEY is not set')
    encryptionKey ??= parseKeyEncryptionKey(config.keyEncryptionKey)
    return encryptionKey
  }

  function use(stored: StoredSigningKey): void {
    const pem = decryptPrivateKey(stored.privateKeyEncrypted, keyEncryptionKey(), stored.kid)
    active = { kid: stored.kid, alg: stored.alg as SigningAlg, privateKey: loadPrivateKey(pem) }
    published = undefined // the key set changed
  }

  function newStoredKey(): StoredSigningKey {
    const key = generateSigningKey(config.signingAlg)
    return {
      kid: key.kid,
      alg: key.alg,
      publicJwk: key.publicJwk,
      privateKeyEncrypted: encryptPrivateKey(key.privateKeyPem, keyEncryptionKey(), key.kid),
      createdAt: clock.now(),
      retiredAt: null,
    }
  }

  /** Loads the active key, creating one when there is none. Two instances racing meet at the unique index. */
  async function loadOrCreateActiveKey(): Promise<void> {
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
    use(stored)
  }

  function publishedCutoff(): Date {
    return new Date(clock.now().getTime() - (config.accessTokenTtl + PUBLISH_MARGIN_SECONDS) * 1000)
  }

  function toVerificationKey(k: SigningKeyInfo): VerificationKey {
    const publicKey = createPublicKey({ key: k.publicJwk as never, format: 'jwk' })
    return { kid: k.kid, alg: k.alg as SigningAlg, publicKey }
  }

  /** Imports the public halves of the published keys into KeyObjects, replacing the set in one go. */
  function reloadVerificationKeys(): Promise<void> {
    reloadingVerificationKeys ??= listPublishedSigningKeys(db, publishedCutoff())
      .then((keys) => {
        const next = new Map<string, VerificationKey>()
        for (const k of keys) next.set(k.kid, toVerificationKey(k))
        verificationKeys = next
      })
      .finally(() => {
        reloadingVerificationKeys = undefined
      })
    return reloadingVerificationKeys
  }

  async function syncActiveKey(): Promise<void> {
    const kid = await findActiveKid(db)
    if (kid !== active?.kid) {
      await loadOrCreateActiveKey()
      await reloadVerificationKeys()
    }
  }

  return {
    /**
     * Loads (or creates) the active key and starts polling. Each app calls it; each stop() undoes one.
     * A database that is down at start does not stop the server: the poll loads the key once it answers,
     * and until then signing answers 503.
     */
    async start(): Promise<void> {
      users++
      if (!timer) {
        timer = setInterval(() => {
          syncActiveKey().catch((err: unknown) => logger.warn({ err }, 'signing key poll failed'))
        }, pollIntervalMs)
        timer.unref()
      }
      starting ??= loadOrCreateActiveKey()
        .then(reloadVerificationKeys)
        .catch((err: unknown) => {
          starting = undefined
          logger.warn({ err }, 'signing keys not loaded yet; retrying at the next poll')
        })
      await starting
    },
    stop(): void {
      users = Math.max(0, users - 1)
      if (users === 0) {
        if (timer) clearInterval(timer)
        timer = undefined
        starting = undefined
      }
    },
    /** Picks up a rotation made by another instance now rather than at the next poll. */
    syncActiveKey,
    activeSigningKey(): ActiveSigningKey {
      if (!active) throw new DatabaseUnavailableError('signing keys are not loaded yet')
      return active
    },
    listKeys: (): Promise<SigningKeyInfo[]> => listSigningKeys(db),
    /**
     * The public key a token names by kid, from memory. An unknown kid of the right shape costs one
     * primary-key lookup, so a key made by a rotation on another instance is found before the next
     * poll; callers are authenticated resource servers or identified clients.
     */
    async verificationKey(kid: string): Promise<VerificationKey | undefined> {
      const known = verificationKeys.get(kid)
      // A kid is a base64url RFC 7638 thumbprint; anything else is looked up nowhere.
      if (known || !isBase64url256Bits(kid)) return known
      const stored = await findPublishedSigningKey(db, kid, publishedCutoff())
      if (!stored) return undefined
      const key = toVerificationKey(stored)
      verificationKeys = new Map(verificationKeys).set(kid, key)
      return key
    },
    /** Public JWKs of the keys whose tokens may still be alive (RFC 7517 key set members). */
    async publishedJwks(): Promise<Record<string, unknown>[]> {
      const now = clock.now().getTime()
      const cutoff = publishedCutoff().getTime()
      // The rows are kept for one poll interval (the JWKS is asked for often and changes only at a
      // rotation); the cut-off is applied on every call, so a retired key leaves on the second.
      if (!published || now - published.loadedAt >= pollIntervalMs || now < published.loadedAt) {
        published = { keys: await listPublishedSigningKeys(db, new Date(cutoff)), loadedAt: now }
      }
      return published.keys
        .filter((k) => k.retiredAt === null || k.retiredAt.getTime() > cutoff)
        .map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg, use: 'sig' }))
    },
    /** Retires the active key and makes a new one active, in one transaction; signs with it from now on. */
    async rotate(): Promise<SigningKeyInfo> {
      const fresh = newStoredKey()
      for (let attempt = 1; ; attempt++) {
        try {
          await db.transaction().execute(async (trx) => {
            await retireActiveSigningKey(trx, fresh.createdAt)
            await insertSigningKey(trx, fresh)
          })
          break
        } catch (err) {
          // A concurrent rotation committed its key between our retire and insert: retire that one too.
          if (!isUniqueViolation(err) || attempt >= 3) throw err
        }
      }
      use(fresh)
      // The rotation has committed: a failed reload must not report it failed (unknown kids are looked up anyway).
      await reloadVerificationKeys().catch((err: unknown) =>
        logger.warn({ err }, 'verification keys not reloaded'),
      )
      const { privateKeyEncrypted: _secret, ...info } = fresh
      return info
    },
  }
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>
