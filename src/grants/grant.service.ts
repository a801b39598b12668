import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import type { Clock } from '../lib/clock.js'
import { type CodeRedemption, redeemAuthorizationCode } from './code-redemption.js'
import { revokeGrantsWhere } from './grant-revocation.repository.js'
import {
  type IssuedRefreshToken,
  type RefreshLifetimes,
  type RefreshRotation,
  rotateRefreshToken,
} from './refresh-rotation.js'

export type { CodeRedemption, IssuedRefreshToken, RefreshLifetimes, RefreshRotation }

export function createGrantService(db: Kysely<Database>, clock: Clock, lifetimes: RefreshLifetimes) {
  return {
    /**
     * Revokes every live grant of a client and their refresh families. Pass `trx` to make it part
     * of a larger transaction; without it, it runs in one of its own.
     */
    async revokeAllForClient(clientId: string, trx?: Kysely<Database>): Promise<number> {
      const run = (t: Kysely<Database>) => revokeGrantsWhere(t, { clientId }, clock.now(), 'client_disabled')
      const ids = trx ? await run(trx) : await db.transaction().execute(run)
      return ids.length
    },
    /** authorization_code grant: consumes the code and starts a refresh family. Throws OAuthError. */
    redeemAuthorizationCode: (input: CodeRedemption): Promise<IssuedRefreshToken> =>
      redeemAuthorizationCode(db, clock, lifetimes, input),
    /** refresh_token grant: rotates the token within its family. Throws OAuthError. */
    rotateRefreshToken: (input: RefreshRotation): Promise<IssuedRefreshToken> =>
      rotateRefreshToken(db, clock, lifetimes, input),
  }
}

export type GrantService = ReturnType<typeof createGrantService>
