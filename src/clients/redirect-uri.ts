const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'blob:',
  'about:',
  'ftp:',
  'ws:',
  'wss:',
])

/**
 * Checks a redirect URI at registration (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §4.1):
 * returns null when acceptable, else why not. The URI is stored exactly as given, and compared
 * at authorization by exact string equality.
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'must be at most 2000 characters'
  if (/\s/.test(uri) || hasControlCharacter(uri)) return 'must not contain spaces or control characters'
  if (uri.includes('#')) return 'must not contain a fragment'
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return 'must be an absolute URI'
  }
  const scheme = url.protocol
  if (FORBIDDEN_SCHEMES.has(scheme)) return `the ${scheme.slice(0, -1)} scheme is not allowed`
  if (url.username || url.password) return 'must not contain user information'
  if (scheme === 'https:') return url.hostname ? null : 'must name a host'
  if (scheme === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? null
      : 'http is allowed only on loopback hosts (localhost, 127.0.0.1, [::1])'
  }
  // RFC 8252 §7.1: native apps use a private-use scheme in reverse-domain form, such as com.example.app:/callback.
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(scheme)) return null
  return 'must use https, http on a loopback host, or a reverse-domain private-use scheme (RFC 8252)'
}

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/**
 * Where a redirect URI leads, for the headers that allow it: the web origin of an http(s) URI
 * (CORS, CSP), or the scheme of a native app's private-use URI (RFC 8252: CSP only, since it has no
 * web origin). Undefined when it does not parse.
 */
export function redirectUriOrigin(uri: string): { web: string } | { scheme: string } | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return undefined
  }
  return url.protocol === 'https:' || url.protocol === 'http:'
    ? { web: url.origin }
    : { scheme: url.protocol }
}

/** A loopback http redirect URI's scheme and host, and its port if any (RFC 8252 §7.3). */
const LOOPBACK_WITH_PORT = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?(?=[/?]|$)/

/** A loopback URI with its port taken out (the rest byte for byte); undefined: not loopback http. */
function withoutLoopbackPort(uri: string): string | undefined {
  const match = LOOPBACK_WITH_PORT.exec(uri)
  if (!match) return undefined
  const port = match[2]
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined
  return `http://${match[1]}${uri.slice(match[0].length)}`
}

/**
 * Whether a requested redirect_uri is one of the registered ones: exact string equality (RFC 9700
 * §4.1.3), except that a loopback http URI matches on any port (RFC 8252 §7.3: a native app opens
 * whatever port is free), its scheme, host, path and query still exact. `http://127.0.0.1/cb` and
 * `http://127.0.0.1:9514/cb` both accept `http://127.0.0.1:9999/cb`, never `http://localhost:9999/cb`.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true
  const portless = withoutLoopbackPort(requested)
  return portless !== undefined && registered.some((uri) => withoutLoopbackPort(uri) === portless)
}

/** A loopback http URI (RFC 8252 §7.3). */
export const isLoopbackRedirectUri = (uri: string): boolean => withoutLoopbackPort(uri) !== undefined

/**
 * A native app's redirect URI: loopback http or a private-use scheme (RFC 8252 §7.1, §7.3). Anyone
 * can claim such a client's id and receive at such a URI (RFC 8252 §8.6), so a remembered consent
 * is never used silently for one: the user confirms with one click.
 */
export function isNativeRedirectUri(uri: string): boolean {
  if (isLoopbackRedirectUri(uri)) return true
  return !uri.startsWith('https:') && !uri.startsWith('http:')
}

/** An origin with a loopback port taken out, so that a loopback origin matches on any port (CORS). */
export function originKey(origin: string): string {
  return withoutLoopbackPort(origin) ?? origin
}
