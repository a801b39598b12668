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

export function parseBasicAuthorization(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return undefined
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header)
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  const id = formDecode(decoded.slice(0, colon))
  const secret = formDecode(decoded.slice(colon + 1))
  if (!id || !secret) return undefined
  return { id, secret }
}
