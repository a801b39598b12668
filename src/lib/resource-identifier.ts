/** RFC 8707 §2 sets no limit; ours keeps identifiers (and the column, migration 0006) bounded. */
export const MAX_RESOURCE_IDENTIFIER_LENGTH = 2048

/** The characters of an RFC 3986 URI: no spaces, controls, backslashes or non-ASCII to be rewritten. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/

/** 127.0.0.0/8 as the URL parser prints it (it turns 127.1 and the like into four decimal parts). */
const IPV4_LOOPBACK = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

const isLoopbackHost = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || IPV4_LOOPBACK.test(hostname)

/**
 * Checks a resource identifier (RFC 8707 §2, RFC 9728 §1.2): an absolute https URI, or http on a
 * loopback host, without a fragment. Returns null when acceptable, else why not. The identifier is
 * stored and compared exactly as given (no normalisation), so it must already be a plain URI: the
 * URL parser here only checks it and would silently rewrite what RFC 3986 does not allow.
 */
export function resourceIdentifierProblem(value: string): string | null {
  const absolute = 'must be an absolute https URI (or http on a loopback host)'
  if (value === '') return absolute
  if (value.length > MAX_RESOURCE_IDENTIFIER_LENGTH)
    return `must be at most ${MAX_RESOURCE_IDENTIFIER_LENGTH} characters`
  if (value.includes('#')) return 'must not contain a fragment'
  if (!URI_CHARACTERS.test(value)) return 'must be a URI (RFC 3986 characters only, no spaces)'
  if (!/^https?:\/\//i.test(value)) return absolute
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return absolute
  }
  if (url.username || url.password) return 'must not contain user information'
  if (!url.hostname) return 'must name a host'
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    return 'http is allowed only on loopback hosts (localhost, 127.0.0.0/8, [::1])'
  return null
}
