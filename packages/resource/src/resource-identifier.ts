/**
 * A resource identifier (RFC 8707 §2, RFC 9728 §1.2): the URI an API is known by, which is the `aud`
 * of the access tokens issued for it. Compared as exact strings, never normalised: the authorization
 * server, the API and its metadata document all repeat the same characters.
 */

export const MAX_RESOURCE_IDENTIFIER_LENGTH = 2048

/** RFC 3986's characters only (unreserved, reserved, '%'): safe inside a quoted header value too. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?[\]@!$&'()*+,;=%]+$/
/** Loopback as the URL parser prints it (it turns 127.1 and the like into four decimal parts). */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/**
 * Why `value` is not a resource identifier, or null when it is: an absolute URI without fragment or
 * user info, `https:`, or `http:` on a loopback host (a local deployment), at most 2048 characters,
 * of RFC 3986's characters only (the URL parser used to check it would silently rewrite others, and
 * the identifier is compared exactly as given). The authorization server registers APIs by this
 * rule and the verifier refuses to start without it: one rule for both.
 */
export function resourceIdentifierProblem(value: string): string | null {
  const absolute = 'must be an absolute https URI (or http on a loopback host)'
  if (value === '') return absolute
  if (value.length > MAX_RESOURCE_IDENTIFIER_LENGTH)
    return `must be at most ${MAX_RESOURCE_IDENTIFIER_LENGTH} characters`
  if (value.includes('#')) return 'must not contain a fragment'
  if (!URI_CHARACTERS.test(value)) return 'must be a URI (RFC 3986 characters only, no spaces)'
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return absolute
  const url = new URL(value)
  if (url.username !== '' || url.password !== '') return 'must not contain user information'
  if (url.hostname === '') return 'must name a host'
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname))
    return 'http is allowed only on loopback hosts (localhost, 127.0.0.0/8, [::1])'
  return null
}

export function isResourceIdentifier(value: unknown): value is string {
  return typeof value === 'string' && resourceIdentifierProblem(value) === null
}

/** RFC 9728 §3: the well-known URI string of protected-resource metadata. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'

/**
 * Where the metadata of `resource` lives (RFC 9728 §3.1): the well-known string inserted between the
 * host and the path and/or query, a terminating slash after the host removed first. So
 * `https://api.example.com` and `https://api.example.com/` → `https://api.example.com/.well-known/oauth-protected-resource`,
 * and `https://api.example.com/links` → `https://api.example.com/.well-known/oauth-protected-resource/links`.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  if (!isResourceIdentifier(resource)) throw new TypeError('not a resource identifier')
  const authorityStart = resource.indexOf('//') + 2
  const rest = resource.slice(authorityStart).search(/[/?]/)
  if (rest === -1) return `${resource}${PROTECTED_RESOURCE_METADATA_PATH}`
  const hostEnd = authorityStart + rest
  const after = resource.slice(hostEnd)
  const suffix = after === '/' || after.startsWith('/?') ? after.slice(1) : after
  return `${resource.slice(0, hostEnd)}${PROTECTED_RESOURCE_METADATA_PATH}${suffix}`
}
