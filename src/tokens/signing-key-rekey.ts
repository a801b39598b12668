import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { Database } from '../db/database.js'
import { type AuditRecorder, OPERATOR, type RequestFacts } from '../audit/audit.service.js'
import { decryptWithRing, encryptPrivateKey, KeyEncryptionKeyMissingError } from './key-encryption.js'
import type { SigningKeyMaker } from './signing-key-maker.js'
import {
  findEncryptedKeyForUpdate,
  listKeyEncryptionIds,
  listSigningCandidates,
  updateEncryptedKey,
} from './signing-key.repository.js'

/** What a key-encryption-key store offers when the server keeps the key itself (runtime-secrets.ts). */
export interface KeyEncryptionKeyStore {
  replace(current: string): { current: string; previous: string }
  forgetPrevious(): void
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

export interface SigningKeyRekeyDeps {
  db: Kysely<Database>
  logger: Logger
  audit: AuditRecorder
  maker: SigningKeyMaker
  /** Set when the key-encryption key lives in DATA_DIR: a rekey then makes the new key itself. */
  keyEncryptionKeyStore?: KeyEncryptionKeyStore | undefined
}

/** The private halves at rest: the check at start, and the move under a new key-encryption key. */
export function createSigningKeyRekey(deps: SigningKeyRekeyDeps) {
  const { db, logger, audit, maker } = deps
  let rekeying: Promise<unknown> | undefined

  /**
   * Re-encrypts every private key under the current key-encryption key, each row in a short
   * transaction of its own (the service keeps signing). With the key in DATA_DIR and every row
   * under it already, a new key is made first (keyEncryptionKeyStore). Idempotent: a row already
   * under the current key is left alone, and a run stopped half way is finished by the next.
   */
  async function rekeyAll(from: RequestFacts | undefined): Promise<RekeyResult> {
    let generated = false
    const store = deps.keyEncryptionKeyStore
    const ringText = maker.ringText()
    if (store && ringText) {
      const current = maker.keyRing().current.id
      if ((await listKeyEncryptionIds(db)).every((k) => k.kekId === current)) {
        maker.replaceRing(store.replace(ringText.current))
        generated = true
        logger.info({ kekId: maker.keyRing().current.id }, 'new key-encryption key made in DATA_DIR')
      }
    }
    const r = maker.keyRing()
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
     * At start: every key the server may sign with must open with the configured key-encryption keys
     * (a wrong KEY_ENCRYPTION_KEY stops the start with a clear error, see main.ts); other keys that do
     * not are only named in the log, since nothing needs their private half.
     */
    async checkKeyEncryption(): Promise<void> {
      const r = maker.keyRing()
      for (const stored of await listSigningCandidates(db)) decryptWithRing(stored, r)
      const stale = (await listKeyEncryptionIds(db)).filter(
        (k) => !k.needed && k.kekId !== null && k.kekId !== r.current.id && k.kekId !== r.previous?.id,
      )
      if (stale.length > 0)
        logger.warn(
          { kids: stale.map((k) => k.kid) },
          'retired signing keys are under a key-encryption key no longer configured (they never sign again)',
        )
    },
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
