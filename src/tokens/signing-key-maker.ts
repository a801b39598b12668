import type { Config } from '../config.js'
import type { Clock } from '../lib/clock.js'
import { encryptPrivateKey, type KeyRing, keyRingFrom } from './key-encryption.js'
import { generateSigningKey } from './key-material.js'
import type { SigningKeyInfo, StoredSigningKey } from './signing-key.repository.js'

/**
 * The key-encryption keys in use (KEY_ENCRYPTION_KEY and its previous value; a rekey may replace them)
 * and the making of new signing keys under the current one. Shared by the key set (which decrypts),
 * the rotation and the schedule (which make keys) and the rekey (which replaces the ring).
 */
export function createSigningKeyMaker(
  config: Pick<Config, 'keyEncryptionKey' | 'keyEncryptionKeyPrevious' | 'signingAlg'>,
  clock: Clock,
) {
  let ringText: { current: string; previous?: string | undefined } | undefined = config.keyEncryptionKey
    ? { current: config.keyEncryptionKey, previous: config.keyEncryptionKeyPrevious }
    : undefined
  let ring: KeyRing | undefined

  function keyRing(): KeyRing {
    if (!ringText) throw new Error('KEY_ENCRYPTION_KEY is not set')
    ring ??= keyRingFrom(ringText.current, ringText.previous)
    return ring
  }

  return {
    keyRing,
    /** The ring's text, undefined when no key-encryption key is set. */
    ringText: () => ringText,
    /** Uses another ring from now on (a rekey that made a new key-encryption key). */
    replaceRing(text: { current: string; previous?: string | undefined }): void {
      ringText = text
      ring = undefined
    },
    /** A new key of SIGNING_ALG, its private half encrypted under the current key-encryption key. */
    newStoredKey(): StoredSigningKey {
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
    },
  }
}

export type SigningKeyMaker = ReturnType<typeof createSigningKeyMaker>

/** A stored key without its private half. */
export const publicInfo = ({ privateKeyEncrypted: _secret, ...rest }: StoredSigningKey): SigningKeyInfo =>
  rest
