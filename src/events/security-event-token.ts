import type { RevocationEventType } from '../db/database.js'
import { epochSeconds } from '../lib/clock.js'
import { type ActiveSigningKey, signJwt } from '../tokens/access-token.js'
import type { RevocationEvent } from './event-stream.repository.js'

/** The `events` member names (RFC 8417 §2.2): one per kind of revocation. */
export const EVENT_TYPE_URIS: Readonly<Record<RevocationEventType, string>> = {
  'grant-revoked': 'urn:linkauth:event:grant-revoked',
  'family-revoked': 'urn:linkauth:event:family-revoked',
  'access-token-revoked': 'urn:linkauth:event:access-token-revoked',
  'client-disabled': 'urn:linkauth:event:client-disabled',
  'key-revoked': 'urn:linkauth:event:key-revoked',
}

/** Rounded up: a receiver must never forget an id before the last token it covers has expired. */
const epochSecondsCeil = (date: Date) => Math.ceil(date.getTime() / 1000)

/** The one event's payload: the access-token claim it matches (grant_id, family_id, jti or client_id), or the header's kid. */
function eventPayload(event: RevocationEvent): Record<string, unknown> {
  const until = epochSecondsCeil(event.until)
  switch (event.type) {
    case 'grant-revoked':
      return { grant_id: event.grantId, until }
    case 'family-revoked':
      return { family_id: event.familyId, grant_id: event.grantId, until }
    case 'access-token-revoked':
      return { jti: event.jti, until }
    case 'client-disabled':
      return { client_id: event.clientId, until }
    case 'key-revoked':
      // The access tokens it covers carry the kid in their header: drop the key, fetch the JWKS again.
      return { kid: event.kid, until }
  }
}

/**
 * An event as a Security Event Token (RFC 8417) for one resource server: typ secevent+jwt, signed
 * with the key that signs access tokens. The jti is the event's id, the same in every stream, so
 * that it is what a receiver acknowledges. No exp (RFC 8417 §2.2 defines none; `until` says how
 * long the receiver keeps the id).
 */
export function signSecurityEventToken(
  event: RevocationEvent,
  context: { issuer: string; audience: string; now: Date },
  key: ActiveSigningKey,
): string {
  return signJwt(
    { typ: 'secevent+jwt' },
    {
      iss: context.issuer,
      aud: context.audience,
      iat: epochSeconds(context.now),
      jti: event.id,
      events: { [EVENT_TYPE_URIS[event.type]]: eventPayload(event) },
    },
    key,
  )
}
