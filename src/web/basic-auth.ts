/** The user-id and password of an HTTP Basic Authorization header (RFC 7617), or undefined. */
export interface BasicCredentials {
  id: string
  secret: string
}

/** RFC 6749 §2.3.1: both parts are form-urlencoded before base64, so "+" is a space and %XX decodes. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '))
  } catch {
    return undefined
  }
}

/** Longer than any id and secret we issue, base64-encoded; a longer header is not ours. */
const MAX_HEADER_LENGTH = 1024

/**
 * An Authorization header as HTTP Basic: undefined when there is none or it uses another scheme,
 * 'malformed' when it is Basic but not base64 of "id:secret" with a non-empty id, else the id and
 * the secret, which may be empty (a public client's id, RFC 6749 §2.3.1).
 */
export function readBasicAuthorization(
  header: string | undefined,
): BasicCredentials | 'malformed' | undefined {
  if (header === undefined || !/^Basic(?: |$)/i.test(header)) return undefined
  if (header.length > MAX_HEADER_LENGTH) return 'malformed'
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)
  if (!match) return 'malformed'
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return 'malformed'
  const id = formDecode(decoded.slice(0, colon))
  const secret = formDecode(decoded.slice(colon + 1))
  if (!id || secret === undefined) return 'malformed'
  return { id, secret }
}

/** Basic credentials with both an id and a secret (a resource server's), or undefined. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  const credentials = readBasicAuthorization(header)
  return typeof credentials === 'object' && credentials.secret !== '' ? credentials : undefined
}
