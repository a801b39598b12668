import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto'

/**
 * Private signing keys at rest: AES-256-GCM under KEY_ENCRYPTION_KEY, a fresh 96-bit IV per key.
 * Stored as `v1.` + base64url(iv ‖ tag ‖ ciphertext); the kid is bound in as associated data, so a
 * ciphertext copied onto another key's row does not decrypt.
 */

const VERSION = 'v1.'
const IV_BYTES = 12
const TAG_BYTES = 16

/** KEY_ENCRYPTION_KEY as 32 bytes: 64 hex characters or 43 base64url characters (config checks the shape). */
export function parseKeyEncryptionKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : Buffer.from(text.replace(/=$/, ''), 'base64url')
  if (key.length !== 32) throw new Error('KEY_ENCRYPTION_KEY must be 32 bytes')
  return key
}

export function encryptPrivateKey(plaintext: string, key: Buffer, kid: string): string {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(kid))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')
}

/** Throws when the key is wrong or the stored value was altered (GCM authentication fails). */
export function decryptPrivateKey(stored: string, key: Buffer, kid: string): string {
  if (!stored.startsWith(VERSION)) throw new Error('unknown private key encoding')
  const raw = Buffer.from(stored.slice(VERSION.length), 'base64url')
  const iv = raw.subarray(0, IV_BYTES)
  const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES)
  const decipher = createDecipheriv('aes-256-gcm', key, iv)
  decipher.setAAD(Buffer.from(kid))
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
    'utf8',
  )
}

/**
 * A key-encryption key's id, stored beside each private key it encrypts: an HMAC of a fixed label
 * under the key (so it reveals nothing of the key), 16 base64url characters. It tells which key a row
 * needs, so that a row under a key no longer configured is named at start, not found at a rotation.
 */
export function keyEncryptionKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('linkauth key-encryption-key id').digest('base64url').slice(0, 16)
}

export interface KeyEncryptionKey {
  id: string
  key: Buffer
}

/** KEY_ENCRYPTION_KEY (encrypts) and KEY_ENCRYPTION_KEY_PREVIOUS (only decrypts, while rows are re-encrypted). */
export interface KeyRing {
  current: KeyEncryptionKey
  previous?: KeyEncryptionKey | undefined
}

export function keyRingFrom(current: string, previous?: string): KeyRing {
  const entry = (text: string): KeyEncryptionKey => {
    const key = parseKeyEncryptionKey(text)
    return { id: keyEncryptionKeyId(key), key }
  }
  const ring: KeyRing = { current: entry(current) }
  if (previous) {
    const p = entry(previous)
    if (p.id !== ring.current.id) ring.previous = p
  }
  return ring
}

/** A stored private key that none of the configured key-encryption keys opens. */
export class KeyEncryptionKeyMissingError extends Error {
  override name = 'KeyEncryptionKeyMissingError'
  constructor(
    readonly kid: string,
    /** The id of the key that encrypted it, when the row records it. */
    readonly kekId: string | null,
    ring: KeyRing,
  ) {
    const configured = [`KEY_ENCRYPTION_KEY (id ${ring.current.id})`]
    if (ring.previous) configured.push(`KEY_ENCRYPTION_KEY_PREVIOUS (id ${ring.previous.id})`)
    super(
      `signing key ${kid} is encrypted under ${kekId ? `the key-encryption key with id ${kekId}` : 'a key-encryption key'}, which is not ${configured.join(' nor ')}: set KEY_ENCRYPTION_KEY_PREVIOUS to that key, start, and run \`linkauth keys rekey\``,
    )
  }
}

/**
 * Decrypts a stored private key with the ring: the key the row names, or (a row from before kek_id
 * was recorded) the current key, then the previous one. Returns the PEM and the id of the key that
 * opened it; throws KeyEncryptionKeyMissingError when none does.
 */
export function decryptWithRing(
  stored: { kid: string; privateKeyEncrypted: string; kekId: string | null },
  ring: KeyRing,
): { pem: string; kekId: string } {
  const candidates = [ring.current, ...(ring.previous ? [ring.previous] : [])].filter(
    (k) => stored.kekId === null || k.id === stored.kekId,
  )
  for (const k of candidates) {
    try {
      return { pem: decryptPrivateKey(stored.privateKeyEncrypted, k.key, stored.kid), kekId: k.id }
    } catch {
      // the next candidate, if any
    }
  }
  throw new KeyEncryptionKeyMissingError(stored.kid, stored.kekId, ring)
}

/**
 * A short-lived secret held in the database (a refresh token's successor inside the retry window):
 * AES-256-GCM under the ring's current key, bound to `boundTo` (associated data), stored as
 * `<kek id>:` + the private-key encoding above, so that a rekey in between still opens it.
 */
export function sealWithRing(ring: KeyRing, plaintext: string, boundTo: string): string {
  return `${ring.current.id}:${encryptPrivateKey(plaintext, ring.current.key, boundTo)}`
}

/** The secret sealWithRing held; undefined when no configured key opens it (or it was altered). */
export function openWithRing(ring: KeyRing, sealed: string, boundTo: string): string | undefined {
  const at = sealed.indexOf(':')
  const kekId = sealed.slice(0, at)
  const key = [ring.current, ring.previous].find((k) => k?.id === kekId)
  if (at < 0 || !key) return undefined
  try {
    return decryptPrivateKey(sealed.slice(at + 1), key.key, boundTo)
  } catch {
    return undefined
  }
}

/**
 * sealWithRing and openWithRing over the ring in use now (a rekey may replace it); seal answers null
 * and open undefined when no key-encryption key is configured.
 */
export function createSecretSeal(ring: () => KeyRing | undefined) {
  return {
    seal(plaintext: string, boundTo: string): string | null {
      const r = ring()
      return r ? sealWithRing(r, plaintext, boundTo) : null
    },
    open(sealed: string, boundTo: string): string | undefined {
      const r = ring()
      return r && openWithRing(r, sealed, boundTo)
    },
  }
}
