import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

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
