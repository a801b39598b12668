import { DatabaseUnavailableError } from '../errors.js'
import type { Clock } from '../lib/clock.js'
import type { ActiveSigningKey } from './access-token.js'
import type { SigningKeySet } from './signing-key-set.js'

/**
 * The key token issuance signs with, from the key set in memory: the pending key once its time has
 * come (every instance switches at the same time, on its own clock, without asking the database),
 * else the active one. No query: this is the hot path.
 */
export function createSigner(keySet: Pick<SigningKeySet, 'signers'>, clock: Clock) {
  return {
    activeSigningKey(): ActiveSigningKey {
      const { active, next } = keySet.signers()
      if (next && clock.now().getTime() >= next.activatesAt) return next.signer
      if (!active) throw new DatabaseUnavailableError('signing keys are not loaded yet')
      return active
    },
    /** The pending key, if any, and when it signs. */
    nextKey(): { kid: string; activatesAt: Date } | undefined {
      const { next } = keySet.signers()
      return next && { kid: next.signer.kid, activatesAt: new Date(next.activatesAt) }
    },
  }
}
