/**
 * The signing keys as an instance holds them in memory (KeySetMemory), and the trust checks applied
 * to it on every call: revocation, and the JWKS cut-off for retired keys. Plain functions over one
 * read of the key set; signing-key-set.ts keeps the current one and replaces it whole.
 */
import { DatabaseUnavailableError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import type { SigningKeyInfo } from './signing-key.repository.js'
import type { Signer, VerificationKey } from './verification-key.js'

export interface KeySetMemory {
  active: Signer | undefined
  /** The pending key and when it signs (ms): every instance switches to it then. */
  next: { signer: Signer; activatesAt: number } | undefined
  /** The key set's state as last read (the poll compares it). */
  state: string | undefined
  verificationKeys: Map<string, VerificationKey>
  /** The rows of the JWKS as last read (the active, pending and recently retired keys). */
  published: SigningKeyInfo[] | undefined
  revokedKids: Set<string>
  /** Counts the reads of the key set; what is derived from it is kept while it stays the same. */
  generation: number
}

/** Before the first read. */
export function nothingRead(): KeySetMemory {
  return {
    active: undefined,
    next: undefined,
    state: undefined,
    verificationKeys: new Map(),
    published: undefined,
    revokedKids: new Set(),
    generation: 0,
  }
}

/** What the trust checks need besides the memory: now, and the JWKS cut-off (retired before it: gone). */
export interface TrustClock {
  clock: Clock
  cutoff: () => Date
}

/**
 * Whether tokens of this key may still be alive: not revoked, and not retired before the JWKS
 * cut-off, read on every call, so a key in memory leaves on the second it leaves the JWKS, on every
 * instance. The active key counts as retired from the moment a due pending key replaced it, even
 * before a reload says so.
 */
function trusted(memory: KeySetMemory, time: TrustClock, key: VerificationKey): boolean {
  if (memory.revokedKids.has(key.kid)) return false
  const n = memory.next
  const replacedAt =
    key.retiredAt ?? (n && n.signer.kid !== key.kid && key.kid === memory.active?.kid ? n.activatesAt : null)
  return replacedAt === null || replacedAt > time.cutoff().getTime()
}

/** A kid's key from memory: undefined when it is not trusted, 'unknown' when it was never read. */
export function inMemory(
  memory: KeySetMemory,
  time: TrustClock,
  kid: string,
): VerificationKey | undefined | 'unknown' {
  if (memory.revokedKids.has(kid)) return undefined
  const known = memory.verificationKeys.get(kid)
  if (known) return trusted(memory, time, known) ? known : undefined
  const n = memory.next
  if (n && n.signer.kid === kid && time.clock.now().getTime() >= n.activatesAt) return n.signer.verification
  return 'unknown'
}

/**
 * Whether a token of this kid, remembered as verified, may still be trusted: the key is known, not
 * revoked, and not retired past the JWKS cut-off.
 */
export function isTrusted(memory: KeySetMemory, time: TrustClock, kid: string): boolean {
  const next = memory.next
  const key =
    memory.verificationKeys.get(kid) ?? (next?.signer.kid === kid ? next.signer.verification : undefined)
  return key !== undefined && trusted(memory, time, key)
}

/**
 * The keys of the JWKS now: the active and pending keys and the retired ones not past the cut-off,
 * never a revoked one. Throws DatabaseUnavailableError before the key set was ever read.
 */
export function publishedKeys(memory: KeySetMemory, time: TrustClock): SigningKeyInfo[] {
  const { published, revokedKids } = memory
  if (!published) throw new DatabaseUnavailableError('signing keys are not loaded yet')
  const since = time.cutoff().getTime()
  return published.filter(
    (k) => !revokedKids.has(k.kid) && (k.pending || k.retiredAt === null || k.retiredAt.getTime() > since),
  )
}

/** The memory without a key this instance has just revoked (a new generation). */
export function withoutKey(memory: KeySetMemory, kid: string): KeySetMemory {
  const verificationKeys = new Map(memory.verificationKeys)
  verificationKeys.delete(kid)
  return {
    ...memory,
    revokedKids: new Set(memory.revokedKids).add(kid),
    verificationKeys,
    generation: memory.generation + 1,
  }
}
