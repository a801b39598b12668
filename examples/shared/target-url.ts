/** Longest target URL we store: what every browser and proxy handles in a Location header. */
export const MAX_TARGET_URL_LENGTH = 2048

/**
 * Why `input` cannot be the target of a short link, or undefined when it can. A short link sends
 * every visitor's browser to its target, so only plain web addresses qualify: absolute http(s)
 * URLs with a host, no user name or password (they would be handed to whoever follows the link, and
 * `https://bank.example@evil.example/` style addresses exist to mislead), and no address of this
 * service itself (a short link to a short link can loop).
 */
export function targetUrlProblem(input: string, ownOrigin: string): string | undefined {
  if (input.length > MAX_TARGET_URL_LENGTH) return `at most ${MAX_TARGET_URL_LENGTH} characters`
  // URL parsing strips surrounding whitespace and tabs/newlines inside; we store only what was meant.
  if (/[\p{Cc}\p{Z}]/u.test(input)) return 'must not contain spaces or control characters'
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return 'must be an absolute URL such as https://example.com/page'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL'
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(input))
    return 'must be an absolute URL such as https://example.com/page'
  if (url.hostname === '') return 'must name a host'
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password'
  if (isOwnOrigin(url, ownOrigin)) return 'must not point at this short-link service'
  return undefined
}

/**
 * Whether `url` is served from `ownOrigin`: the same scheme and port, and the same host, where every
 * name of this machine's loopback interface counts as one host (`localhost` and `*.localhost`,
 * RFC 6761 §6.3; 127.0.0.0/8; [::1]; 127.x written as an IPv4-mapped IPv6 address; and 0.0.0.0 or
 * [::], which reach this machine too). A service at `http://localhost:3102` is reached as
 * `http://127.0.0.1:3102` just the same, and a short link to it would loop.
 */
export function isOwnOrigin(url: URL, ownOrigin: string): boolean {
  if (url.origin === ownOrigin) return true
  const own = new URL(ownOrigin)
  return (
    url.protocol === own.protocol &&
    url.port === own.port &&
    isLoopbackHost(url.hostname) &&
    isLoopbackHost(own.hostname)
  )
}

/** A host name (as WHATWG URL serialises it: lower case, IPv4 dotted, IPv6 bracketed) of loopback. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (/^127\.\d+\.\d+\.\d+$/.test(host) || host === '0.0.0.0') return true
  if (host === '[::1]' || host === '[::]') return true
  // ::ffff:127.x.y.z, which URL writes as [::ffff:7fxx:xxxx].
  return /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host)
}

/** The form we store and redirect to: WHATWG-serialised (host in punycode, the rest percent-encoded). */
export function normalizeTargetUrl(input: string): string {
  return new URL(input).href
}
