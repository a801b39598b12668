/** RFC 8707 §2 sets no limit; ours keeps identifiers (and the column, migration 0006) bounded. */
export const MAX_RESOURCE_LENGTH = 2048

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/

/**
 * Why `value` cannot be a resource identifier (RFC 8707 §2: an absolute URI without a fragment;
 * https, or http on a loopback host), or null when it can be one. Identifiers are compared as exact
 * strings elsewhere, so nothing here normalises.
 *
 * A stand-in with the signature of @linkauth/resource's resourceIdentifierProblem (token-contract),
 * which the registry uses on main: at the merge, import that one instead and delete this file, so
 * the rule has one home.
 */
export function resourceIdentifierProblem(value: string): string | null {
  if (value.length > MAX_RESOURCE_LENGTH) return `must be at most ${MAX_RESOURCE_LENGTH} characters`
  if (value.includes('#')) return 'must not contain a fragment'
  // Printable ASCII only: the URL parser would accept (and rewrite) spaces, controls and NUL, which
  // PostgreSQL cannot even compare.
  if (!/^[\x21-\x7e]+$/.test(value)) return 'must be a URI (RFC 3986 characters only, no spaces)'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute https URI (or http on a loopback host)'
  }
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname)) return null
  return 'must be an absolute https URI (or http on a loopback host)'
}
