import { errors, jwtVerify } from 'jose'
import { type JwksCache, SIGNATURE_ALGORITHMS } from './jwks-cache.js'
import type { RevokedKind } from './revocation-set.js'

/**
 * A revocation the feed announced: this id is revoked until `until` (epoch seconds). Kind `kid`: a
 * signing key removed in an emergency (a token names it in its header, not in a claim).
 */
export interface Revocation {
  kind: RevokedKind | 'kid'
  id: string
  until: number
}

/** The event types of linkauth's feed and the member naming the revoked id. */
const EVENT_TYPES: Record<string, Revocation['kind']> = {
  'urn:linkauth:event:grant-revoked': 'grant_id',
  'urn:linkauth:event:family-revoked': 'family_id',
  'urn:linkauth:event:access-token-revoked': 'jti',
  'urn:linkauth:event:client-disabled': 'client_id',
  'urn:linkauth:event:key-revoked': 'kid',
}

/** RFC 8935 §2.4 error codes, which RFC 8936 §2.4 uses in `setErrs`. */
export type SetErrorCode = 'invalid_request' | 'invalid_key' | 'invalid_issuer' | 'invalid_audience'

export class SetError extends Error {
  constructor(
    readonly err: SetErrorCode,
    readonly description: string,
  ) {
    super(description)
  }
}

/** The SET's key is not (yet) in our copy of the JWKS: leave it unacknowledged and try again later. */
export class SetKeyUnknownError extends Error {}

function setErrorFrom(err: unknown): Error {
  if (err instanceof errors.JWKSNoMatchingKey || !(err instanceof errors.JOSEError))
    return new SetKeyUnknownError('the key of this SET cannot be fetched now')
  if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'iss')
    return new SetError('invalid_issuer', 'unexpected iss')
  if (err instanceof errors.JWTClaimValidationFailed && err.claim === 'aud')
    return new SetError('invalid_audience', 'unexpected aud')
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JOSEAlgNotAllowed)
    return new SetError('invalid_key', 'signature not verified')
  return new SetError('invalid_request', `not a valid SET (${err.code})`)
}

function revocationOf(events: unknown): Revocation | undefined {
  if (typeof events !== 'object' || events === null || Array.isArray(events))
    throw new SetError('invalid_request', 'events is not an object')
  const entries = Object.entries(events)
  if (entries.length !== 1) throw new SetError('invalid_request', 'events must have exactly one member')
  const [type, event] = entries[0]!
  const kind = EVENT_TYPES[type]
  if (kind === undefined) return undefined // a newer event type: nothing for us to do
  const e = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>
  const id = e[kind]
  if (typeof id !== 'string' || id === '' || typeof e.until !== 'number' || !Number.isFinite(e.until))
    throw new SetError('invalid_request', `${type} needs ${kind} and until`)
  return { kind, id, until: e.until }
}

/**
 * Verifies one Security Event Token (RFC 8417) of the feed with the same JWKS as access tokens:
 * typ secevent+jwt (so an access token cannot pass for an event, nor an event for a token), our
 * issuer, our resource-server id as audience, and the `jti` it was delivered under. Returns the
 * revocation it announces, or undefined for an event type this version does not know.
 */
export async function readRevocationEvent(
  deliveredAs: string,
  jws: unknown,
  options: { issuer: string; audience: string; jwks: JwksCache },
): Promise<Revocation | undefined> {
  if (typeof jws !== 'string') throw new SetError('invalid_request', 'not a compact JWS')
  const { payload } = await jwtVerify(jws, options.jwks.getKey, {
    typ: 'secevent+jwt',
    algorithms: [...SIGNATURE_ALGORITHMS],
    issuer: options.issuer,
    audience: options.audience,
    requiredClaims: ['jti', 'iat', 'events'],
  }).catch((err: unknown) => {
    throw setErrorFrom(err)
  })
  if (payload.jti !== deliveredAs) throw new SetError('invalid_request', 'jti differs from the one delivered')
  return revocationOf(payload.events)
}
