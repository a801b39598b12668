/** RFC 8707 §2 and the registry's limit: a resource identifier is at most this long. */
export const MAX_RESOURCE_LENGTH = 2048

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/

/**
 * Why `value` cannot be a resource identifier (RFC 8707 §2: an absolute URI without a fragment;
 * https, or http on a loopback host as for native apps), or undefined when it can be one.
 * Identifiers are compared as exact strings elsewhere, so nothing here normalises.
 */
export function resourceIdentifierProblem(value: string): string | undefined {
  if (value.length > MAX_RESOURCE_LENGTH) return `resource must be at most ${MAX_RESOURCE_LENGTH} characters.`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'resource must be an absolute URI.'
  }
  if (value.includes('#')) return 'resource must not contain a fragment.'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname)) return undefined
  return 'resource must be an https URI (or http on a loopback host).'
}
