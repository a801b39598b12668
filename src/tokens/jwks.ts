import { createHash } from 'node:crypto'
import type { SigningKeySet } from './signing-key-set.js'

/**
 * Resource servers may cache the JWKS this long (its Cache-Control max-age); jose's remote key set
 * also refetches when it meets an unknown kid, so a short max-age is enough. A key made by the
 * schedule is published at least this long, plus a poll and a margin, before it signs.
 */
export const JWKS_MAX_AGE_SECONDS = 60

/** The JWKS as served: its JSON text and a strong ETag of it (RFC 9110 §8.8.3). */
export interface JwksDocument {
  body: string
  etag: string
}

/**
 * The JWKS (RFC 7517): the keys whose tokens may be alive or are about to be, from the key set in
 * memory, never from the database per request. The key set follows the database at each change
 * notification (milliseconds) or poll (5 s): a key rotated in by hand on another instance is
 * published here within that time, and a scheduled key long before it signs (signing-key-schedule.ts).
 * The cut-off is applied on every call, so a retired key leaves on the second, on every instance.
 * The text is made again only when the keys in it change.
 */
export function createJwksPublisher(keySet: Pick<SigningKeySet, 'publishedKeys' | 'generation'>) {
  let cached: (JwksDocument & { generation: number; kids: string }) | undefined

  function jwks(): Record<string, unknown>[] {
    return keySet.publishedKeys().map((k) => ({ ...k.publicJwk, kid: k.kid, alg: k.alg, use: 'sig' }))
  }

  return {
    /** Public JWKs of the keys whose tokens may be alive or are about to be (RFC 7517 key set members). */
    publishedJwks: jwks,
    document(): JwksDocument {
      const keys = keySet.publishedKeys()
      const kids = keys.map((k) => k.kid).join(' ')
      const generation = keySet.generation()
      if (cached?.generation !== generation || cached.kids !== kids) {
        const body = JSON.stringify({ keys: jwks() })
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`
        cached = { body, etag, generation, kids }
      }
      return { body: cached.body, etag: cached.etag }
    },
  }
}

/** Whether an If-None-Match header matches the ETag (RFC 9110 §13.1.2: weak comparison, or `*`). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t.replace(/^W\//, '') === etag
  })
}
