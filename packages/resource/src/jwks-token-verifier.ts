import { errors, jwtVerify, type JWTPayload } from 'jose'
import { invalidToken, type ResourceAuthError, VerifierUnavailableError } from './errors.js'
import { type JwksCache, SIGNATURE_ALGORITHMS } from './jwks-cache.js'
import {
  ACCESS_TOKEN_TYPE,
  isSoleAudience,
  readAccessTokenClaims,
  type SignedAccessTokenClaims,
} from './token-contract.js'

/**
 * The claims of a linkauth access token (RFC 9068) as the server signs them, checked for presence
 * and type, with `scope` (space-separated) also split into `scopes`.
 */
export interface AccessTokenClaims extends SignedAccessTokenClaims {
  scopes: string[]
}

const REQUIRED_CLAIMS = ['sub', 'client_id', 'jti', 'scope', 'grant_id', 'family_id', 'iat', 'exp']

/** Far longer than any token linkauth signs; a longer string is not worth parsing. */
const MAX_TOKEN_LENGTH = 8192

/**
 * A token string whose signature, header and claims were checked is remembered (the whole string is
 * the key, so nothing unverified can match); its times are checked again on every call. An ECDSA
 * verify is most of the cost of a request on a small API. Bounded: the oldest entry goes first.
 */
const VERIFIED_CACHE_MAX = 10_000

function asClaims(payload: JWTPayload): AccessTokenClaims {
  const signed = readAccessTokenClaims(payload)
  if (!signed)
    throw invalidToken(
      'invalid_claims',
      'The access token lacks a required claim or has one of the wrong type.',
    )
  return Object.freeze({ ...signed, scopes: signed.scope === '' ? [] : signed.scope.split(' ') })
}

/** exp, and iat not in the future, each with the leeway (jose checks exp and nbf; iat is ours). */
function checkTimes(claims: AccessTokenClaims, nowSeconds: number, leeway: number): void {
  if (claims.exp <= nowSeconds - leeway) throw invalidToken('token_expired', 'The access token has expired.')
  if (claims.iat > nowSeconds + leeway)
    throw invalidToken('token_not_yet_valid', 'The access token was issued in the future.')
}

/** jose's failures, each to its own stable code; descriptions are ours and never echo the token. */
function fromJoseError(err: unknown): ResourceAuthError {
  if (err instanceof errors.JWTExpired) return invalidToken('token_expired', 'The access token has expired.')
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'typ':
        return invalidToken('wrong_type', 'The token is not an access token (typ must be at+jwt).')
      case 'iss':
        return invalidToken('wrong_issuer', 'The access token was not issued by the expected issuer.')
      case 'aud':
        return invalidToken('wrong_audience', 'The access token is not meant for this API.')
      case 'nbf':
        return invalidToken('token_not_yet_valid', 'The access token is not valid yet.')
      default:
        return invalidToken(
          'invalid_claims',
          'The access token lacks a required claim or has one of the wrong type.',
        )
    }
  }
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return invalidToken('bad_signature', 'The access token signature is invalid.')
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
    return invalidToken('unknown_key', 'The access token was signed with an unknown key.')
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return invalidToken(
      'unsupported_alg',
      'The access token is signed with an algorithm that is not accepted.',
    )
  if (err instanceof errors.JOSEError)
    return invalidToken('malformed_token', 'The access token is malformed.')
  // Not about the token: the key set could not be fetched.
  return new VerifierUnavailableError()
}

/**
 * jose accepts an `aud` array that contains ours (RFC 9068 §4), as linkauth issues a token asked for
 * without `resource` to every API serving its scopes. With `soleAudience` a token naming other APIs
 * as well is refused: it could have been replayed here by one of them.
 */
function onlyFor(resource: string, claims: AccessTokenClaims): AccessTokenClaims {
  if (isSoleAudience(claims.aud, resource)) return claims
  throw invalidToken('wrong_audience', 'The access token is not meant for this API alone.')
}

export interface JwksTokenVerifierOptions {
  issuer: string
  /** The `aud` accepted: a token's `aud` must be it or a list that contains it. */
  resource: string
  /** Accept only tokens whose `aud` is this resource and no other (default false). */
  soleAudience?: boolean
  jwks: JwksCache
  clockToleranceSeconds: number
  now: () => Date
}

/**
 * RFC 9068 §4 with jose: typ at+jwt (application/at+jwt too: jose compares media types), an
 * asymmetric alg of a published key, the signature, iss, aud, exp/nbf/iat with leeway, and every
 * required claim present with its type.
 */
export function createJwksTokenVerifier(options: JwksTokenVerifierOptions) {
  const verified = new Map<string, { claims: AccessTokenClaims; generation: number }>()
  const leeway = options.clockToleranceSeconds
  const nowSeconds = () => Math.floor(options.now().getTime() / 1000)

  function remember(token: string, claims: AccessTokenClaims): void {
    if (verified.size >= VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value!)
    verified.set(token, { claims, generation: options.jwks.generation })
  }

  async function verifySignedToken(token: string): Promise<AccessTokenClaims> {
    if (token.length > MAX_TOKEN_LENGTH)
      throw invalidToken('malformed_token', 'The access token is malformed.')
    const payload = await jwtVerify(token, options.jwks.getKey, {
      typ: ACCESS_TOKEN_TYPE,
      algorithms: [...SIGNATURE_ALGORITHMS],
      issuer: options.issuer,
      audience: options.resource,
      requiredClaims: REQUIRED_CLAIMS,
      clockTolerance: leeway,
      currentDate: options.now(),
    }).then(
      (result) => result.payload,
      (err: unknown) => {
        throw fromJoseError(err)
      },
    )
    const claims = asClaims(payload)
    return options.soleAudience ? onlyFor(options.resource, claims) : claims
  }

  return {
    async verify(token: string): Promise<AccessTokenClaims> {
      // Before the cache: a remembered token whose key has left the JWKS must not outlive the set's
      // maximum age (a refetch that drops its kid moves the generation on).
      await options.jwks.ensureFresh().catch(() => {
        throw new VerifierUnavailableError()
      })
      const known = verified.get(token)
      if (known && known.generation === options.jwks.generation) {
        checkTimes(known.claims, nowSeconds(), leeway)
        return known.claims
      }
      const claims = await verifySignedToken(token)
      checkTimes(claims, nowSeconds(), leeway)
      remember(token, claims)
      return claims
    },
  }
}

export type JwksTokenVerifier = ReturnType<typeof createJwksTokenVerifier>
