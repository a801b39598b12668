import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { isUniqueViolation } from '../db/errors.js'
import { decryptWithRing } from './key-encryption.js'
import { loadPrivateKey, type SigningAlg } from './key-material.js'
import type { KeySetMemory } from './signing-key-memory.js'
import type { SigningKeyMaker } from './signing-key-maker.js'
import {
  findActiveSigningKey,
  findPendingSigningKey,
  findSigningKeyState,
  insertSigningKey,
  listPublishedSigningKeys,
  listSigningKeys,
  type StoredSigningKey,
} from './signing-key.repository.js'
import { type Signer, toVerificationKey, type VerificationKey } from './verification-key.js'

/** Decrypts a stored key, reusing what is already in memory for the same kid. */
function signerOf(
  stored: StoredSigningKey,
  known: readonly (Signer | undefined)[],
  maker: SigningKeyMaker,
): Signer {
  for (const k of known) if (k?.kid === stored.kid) return k
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
 * unique index), the pending one, the public keys tokens may carry, the revoked kids. `known` gives
 * the signers in memory (reused rather than decrypted again). The caller replaces its memory with
 * the answer only once all of it is read and decrypted.
 */
export async function readKeySet(
  deps: { db: Kysely<Database>; maker: SigningKeyMaker; cutoff: () => Date },
  known: () => readonly (Signer | undefined)[],
): Promise<Omit<KeySetMemory, 'generation'>> {
  const { db, maker, cutoff } = deps
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
  const activeSigner = signerOf(stored, known(), maker)
  const nextSigner = pending && {
    signer: signerOf(pending, known(), maker),
    activatesAt: pending.activatesAt.getTime(),
  }
  const keys = new Map<string, VerificationKey>()
  for (const k of rows) if (!k.pending) keys.set(k.kid, toVerificationKey(k))
  return {
    active: activeSigner,
    next: nextSigner,
    verificationKeys: keys,
    published: rows,
    revokedKids: new Set(revoked),
    state: nextState,
  }
}
