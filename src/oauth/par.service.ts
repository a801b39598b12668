import type { Kysely } from 'kysely'
import type { Config } from '../config.js'
import type { Database } from '../db/database.js'
import { addSeconds, type Clock } from '../lib/clock.js'
import { randomToken, sha256 } from '../lib/secrets.js'
import type { RawQuery } from './authorize-request.js'
import { insertPushedRequest, type PushedParameters, takePushedRequest } from './par.repository.js'

/** RFC 9126 §2.2: the URN prefix of every request_uri we hand out. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:'
/** 32 random bytes, base64url. */
const HANDLE = /^[A-Za-z0-9_-]{43}$/

/**
 * Pushed authorization requests (RFC 9126): a client's validated authorization parameters kept under
 * a random, short-lived request_uri, stored only as the SHA-256 of its handle, spent once by the
 * client that pushed them.
 */
export function createParService(db: Kysely<Database>, clock: Clock, config: Pick<Config, 'parTtl'>) {
  return {
    async push(
      clientId: string,
      parameters: PushedParameters,
    ): Promise<{ request_uri: string; expires_in: number }> {
      const handle = randomToken(32)
      const now = clock.now()
      await insertPushedRequest(db, {
        handleHash: sha256(handle),
        clientId,
        parameters,
        createdAt: now,
        expiresAt: addSeconds(now, config.parTtl),
      })
      return { request_uri: REQUEST_URI_PREFIX + handle, expires_in: config.parTtl }
    },

    /** The parameters pushed under `requestUri` by `clientId`; undefined when unknown, spent, expired or another client's. */
    async take(requestUri: string, clientId: string): Promise<RawQuery | undefined> {
      if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return undefined
      const handle = requestUri.slice(REQUEST_URI_PREFIX.length)
      if (!HANDLE.test(handle)) return undefined
      return takePushedRequest(db, sha256(handle), clientId, clock.now())
    },
  }
}

export type ParService = ReturnType<typeof createParService>
