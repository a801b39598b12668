import { type AuthScheme, InvalidRequestError, missingToken } from './errors.js'

/** RFC 6750 §2.1: `Bearer 1*SP b64token`; the scheme is case-insensitive (RFC 7235 §2.1). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
const BEARER_SCHEME = /^Bearer(?:\s|$)/i

/**
 * The bearer token of an Authorization header value. No header, or another scheme (Basic, …), is a
 * request without our credentials: 401 with a bare challenge. `Bearer` with nothing usable after it
 * is malformed: 400 invalid_request.
 */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '' || !BEARER_SCHEME.test(header)) throw missingToken()
  const match = BEARER.exec(header)
  if (!match)
    throw new InvalidRequestError(
      'malformed_authorization',
      'The Authorization header must be "Bearer" followed by one space and the access token.',
    )
  return match[1]!
}

/** RFC 9449 §7.1: `DPoP 1*SP token68`, the scheme case-insensitive like Bearer's. */
const DPOP = /^DPoP +([A-Za-z0-9\-._~+/]+=*) *$/i
const DPOP_SCHEME = /^DPoP(?:\s|$)/i

/**
 * The access token and its scheme: `Bearer` (RFC 6750) or `DPoP` (RFC 9449 §7.1). No header, or
 * another scheme, is a request without our credentials (401, bare challenges); either scheme with
 * nothing usable after it is malformed (400 invalid_request).
 */
export function authorizationToken(header: string | undefined): { scheme: AuthScheme; token: string } {
  if (header !== undefined && DPOP_SCHEME.test(header)) {
    const match = DPOP.exec(header)
    if (!match)
      throw new InvalidRequestError(
        'malformed_authorization',
        'The Authorization header must be "DPoP" followed by one space and the access token.',
      )
    return { scheme: 'DPoP', token: match[1]! }
  }
  return { scheme: 'Bearer', token: bearerToken(header) }
}

/**
 * A token in the query string (RFC 6750 §2.3) is not accepted: URLs end up in logs. With a header as
 * well it is the "more than one method" case of RFC 6750 §3.1; alone, an unsupported method. Both are
 * invalid_request.
 */
export function queryTokenError(withHeader: boolean): InvalidRequestError {
  return withHeader
    ? new InvalidRequestError(
        'multiple_methods',
        'The access token was sent by more than one method; send it in the Authorization header only.',
      )
    : new InvalidRequestError(
        'unsupported_method',
        'Send the access token in the Authorization header, not in the query string.',
      )
}
