/**
 * The contract of a linkauth access token (RFC 9068), in one place: the authorization server signs
 * and introspects by it, and resource APIs verify by it. `@linkauth/resource/token-contract` exports
 * it on its own so that the server needs nothing else of the toolkit.
 */
import type { ResourceAuthErrorCode } from './errors.js'

/** The claims linkauth signs into every access token, as a verifier reads them back. */
export interface SignedAccessTokenClaims {
  iss: string
  sub: string
  aud: string | string[]
  exp: number
  iat: number
  jti: string
  client_id: string
  scope: string
  grant_id: string
  family_id: string
  /**
   * RFC 9449 §6.1 / RFC 7800: the key the token is bound to, as the RFC 7638 SHA-256 thumbprint of
   * the client's DPoP key. Present only on DPoP-bound tokens; such a token is accepted only with a
   * DPoP proof made with that key, never as a bearer token.
   */
  cnf?: { jkt: string }
  /**
   * linkauth's private claim (RFC 9068 §2.2.3 leaves room for them): who stands behind the app the
   * token was issued to, as it stood at issue. Absent from tokens signed before the claim existed,
   * and dropped when it holds a value this verifier does not know: read it with clientStandingOf.
   */
  client_standing?: ClientStanding
}

/**
 * An application's standing (issue 37): `verified`, registered (or verified) by the operator;
 * `vouched`, a Client ID Metadata Document whose host vouches for it; `unverified`, registered by
 * itself (RFC 7591) or with its standing taken away by the operator.
 */
export type ClientStanding = 'verified' | 'vouched' | 'unverified'

export const CLIENT_STANDINGS: readonly ClientStanding[] = ['verified', 'vouched', 'unverified']

export function isClientStanding(value: unknown): value is ClientStanding {
  return typeof value === 'string' && (CLIENT_STANDINGS as readonly string[]).includes(value)
}

/**
 * The standing an API should act on: the token's claim, or `unverified` when the token has none
 * (signed before the claim existed, or a value this verifier does not know): the cautious reading.
 */
export function clientStandingOf(claims: Pick<SignedAccessTokenClaims, 'client_standing'>): ClientStanding {
  return claims.client_standing ?? 'unverified'
}

/** RFC 9068 §2.1: the `typ` header of an access token. */
export const ACCESS_TOKEN_TYPE = 'at+jwt'

/**
 * Why a token is not a valid access token, as a code a caller can switch on (after jose's errors).
 * The server's own verifier answers a subset of the toolkit's codes, never codes of its own.
 */
export type AccessTokenFailure = Extract<
  ResourceAuthErrorCode,
  | 'malformed_token'
  | 'unsupported_alg'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_type'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'invalid_claims'
  | 'token_expired'
  | 'token_not_yet_valid'
>

/** jti, grant_id and family_id are UUIDs as PostgreSQL prints them (any version). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A UUID as linkauth issues them: the ids a token names, and the ids of users and grants. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}

/**
 * Whether a token is for this audience (RFC 9068 §4: its `aud` contains the identifier). A token
 * asked for without `resource` lists every API that serves one of its scopes; one asked for with
 * `resource` names that API alone. Exact strings, never normalised.
 */
export function hasAudience(aud: string | string[], audience: string): boolean {
  return typeof aud === 'string' ? aud === audience : aud.includes(audience)
}

/**
 * Whether a token's `aud` names this audience and no other: a token asked for with `resource` (RFC
 * 8707). An API that must not accept tokens that other APIs accept too insists on this.
 */
export function isSoleAudience(aud: string | string[], audience: string): boolean {
  return typeof aud === 'string' ? aud === audience : aud.length === 1 && aud[0] === audience
}

/** RFC 9068 §2.1: typ "at+jwt" (the media type application/at+jwt, prefix optional, any case). */
export function isAccessTokenType(typ: unknown): boolean {
  return typeof typ === 'string' && /^(application\/)?at\+jwt$/i.test(typ)
}

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0
const isSeconds = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v)
/** An RFC 7638 SHA-256 thumbprint, base64url without padding: 43 characters. */
const JKT = /^[A-Za-z0-9_-]{43}$/

/** `cnf` as RFC 9449 §6.1 puts it in a DPoP-bound token: `{ jkt }`; anything else in it is ignored. */
function readConfirmation(cnf: unknown): { jkt: string } | undefined | false {
  if (cnf === undefined) return undefined
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) return false
  const jkt = (cnf as Record<string, unknown>).jkt
  return typeof jkt === 'string' && JKT.test(jkt) ? { jkt } : false
}

/**
 * The contract's claims of a verified payload, each present with its type (copied, so nothing else
 * of the payload travels on); undefined when one is missing or of the wrong type.
 */
export function readAccessTokenClaims(p: Record<string, unknown>): SignedAccessTokenClaims | undefined {
  const audOk = isText(p.aud) || (Array.isArray(p.aud) && p.aud.length > 0 && p.aud.every(isText))
  // A cnf that is there but unreadable is a token bound to something this verifier can't check.
  const cnf = readConfirmation(p.cnf)
  if (
    cnf === false ||
    !isText(p.iss) ||
    !isText(p.sub) ||
    !audOk ||
    !isSeconds(p.exp) ||
    !isSeconds(p.iat) ||
    !isUuid(p.jti) ||
    !isText(p.client_id) ||
    typeof p.scope !== 'string' ||
    !isUuid(p.grant_id) ||
    !isUuid(p.family_id)
  )
    return undefined
  return {
    iss: p.iss,
    sub: p.sub,
    aud: p.aud as string | string[],
    exp: p.exp,
    iat: p.iat,
    jti: p.jti,
    client_id: p.client_id,
    scope: p.scope,
    grant_id: p.grant_id,
    family_id: p.family_id,
    ...(cnf ? { cnf } : {}),
    ...(isClientStanding(p.client_standing) ? { client_standing: p.client_standing } : {}),
  }
}

/** The `aud` of a token issued for one API: that API's resource identifier (RFC 8707). */
export {
  isResourceIdentifier,
  MAX_RESOURCE_IDENTIFIER_LENGTH,
  resourceIdentifierProblem,
} from './resource-identifier.js'
