import { randomUUID } from 'node:crypto'
import { isUuid } from '@linkauth/resource/token-contract'
import { randomToken } from './secrets.js'

/**
 * Every identifier and secret the service issues: how each is made, and how a presented one is
 * recognised. A value of another shape names nothing of ours, so it is refused before any query
 * (a malformed uuid or a NUL byte would make PostgreSQL fail the statement: a 500, not an answer).
 */

/** 256 random bits, base64url: 43 characters. SHA-256 digests and RFC 7638 thumbprints look the same. */
const BASE64URL_256_BITS = /^[A-Za-z0-9_-]{43}$/
/** 128 random bits, base64url: 22 characters. */
const BASE64URL_128_BITS = /^[A-Za-z0-9_-]{22}$/
/** The clients table's check: ours are 22 characters, older or imported ones may be 8 to 64. */
const CLIENT_ID = /^[A-Za-z0-9_-]{8,64}$/

/** Authorization codes, refresh tokens, sign-in session tokens, CSRF secrets, generated operator secrets. */
export const newSecret = (): string => randomToken(32)
/** The shape of newSecret(), of a SHA-256 digest (S256 code challenges) and of a key's kid. */
export const isBase64url256Bits = (value: string): boolean => BASE64URL_256_BITS.test(value)

/** client_id: 128 random bits; public, but not guessable. */
export const newClientId = (): string => randomToken(16)
export const isClientId = (value: string): boolean => CLIENT_ID.test(value) || isClientIdUrl(value)

/** The longest client_id URL we take: the audit trail's client_id column holds 128 characters. */
export const CLIENT_ID_URL_MAX = 128
/** Printable ASCII only, no spaces: nothing a query, a log line or a page could trip on. */
const CLIENT_ID_URL = /^https:\/\/[!-~]+$/

/**
 * Why a client_id URL (draft-ietf-oauth-client-id-metadata-document §3) cannot name a client, or
 * null when it can: https, a host not ending in a dot, a path other than "/", no "." or ".." segment,
 * no fragment, no user name or password, at most 128 printable ASCII characters. Compared as a
 * plain string, never normalised (the draft forbids the server to).
 */
export function clientIdUrlProblem(value: string): string | null {
  if (value.length > CLIENT_ID_URL_MAX) return `must be at most ${CLIENT_ID_URL_MAX} characters`
  if (!CLIENT_ID_URL.test(value)) return 'must be an https URL of printable characters without spaces'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute https URL'
  }
  if (url.username || url.password) return 'must not contain a user name or password'
  // The same host as without the dot to DNS, but another string: refused, so one spelling per host.
  if (url.hostname.endsWith('.')) return 'must not have a host name ending in a dot'
  if (value.includes('#')) return 'must not contain a fragment'
  const rawPath = value.slice(value.indexOf('/', 'https://'.length) >>> 0).split('?')[0] ?? ''
  if (!value.slice('https://'.length).includes('/') || url.pathname === '/') return 'must have a path'
  const dots = (segment: string) => segment.replace(/%2e/gi, '.')
  if (rawPath.split('/').some((segment) => dots(segment) === '.' || dots(segment) === '..'))
    return 'must not contain "." or ".." path segments'
  return null
}

/** What a client_id that looks like a URL of another scheme (`http://…`) is told. */
export const CLIENT_ID_URL_NOT_HTTPS =
  "This client_id looks like a URL: a URL client_id names a metadata document, and a metadata document's URL must be https."

/** A client_id that looks like a URL but is not https: no client, and it deserves to be told why. */
export const isNonHttpsClientIdUrl = (value: string): boolean =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(value) && !value.toLowerCase().startsWith('https://')

/** A client_id that is a URL naming its own metadata document (draft-ietf-oauth-client-id-metadata-document). */
export const isClientIdUrl = (value: string): boolean =>
  value.startsWith('https://') && clientIdUrlProblem(value) === null

/** The id of a pending authorization request (sign-in, then consent) and of a known device. */
export const newShortId = (): string => randomToken(16)
export function isShortId(value: unknown): value is string {
  return typeof value === 'string' && BASE64URL_128_BITS.test(value)
}

/** A resource server's id: a prefix an operator recognises, then 96 random bits. */
export const newResourceServerId = (): string => `rs_${randomToken(12)}`

/**
 * The shape every caller id we issue fits (client ids and resource-server ids, old and new): what
 * does not is no one's and never reaches a query or a rate-limit key.
 */
const CALLER_ID = /^[A-Za-z0-9_-]{1,100}$/
export const isCallerIdShape = (value: string): boolean => CALLER_ID.test(value) || isClientIdUrl(value)

/** Access-token jti; rows' own ids (users, grants, streams) come from PostgreSQL. */
export const newUuid = (): string => randomUUID()

/**
 * Refresh-family ids: UUIDv7 (RFC 9562 §5.7), 48 bits of Unix milliseconds then 74 random bits. A new
 * family's id lands at the right-hand end of the families' primary key and of the tokens' family_id
 * index, pages that stay in shared buffers, where a random UUID touched a random leaf of indexes that
 * grow to a year of rows (bench/README.md, "Hot paths: empty against a year"). 74 random bits keep two
 * families of one millisecond apart; the id names nothing secret (a token's `iat` says as much).
 */
export function newTimeOrderedUuid(now = Date.now()): string {
  // randomUUID draws from Node's buffered pool (randomFillSync per id cost ~20 µs on the bench VM): its
  // 3 hex after the version and its variant + 60 bits (from position 15) are the 74 random bits.
  const time = now.toString(16).padStart(12, '0')
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`
}
export { isUuid }

/** PostgreSQL text cannot hold NUL: a value with one is no identifier, URI or address of ours. */
export const hasNul = (value: string): boolean => value.includes('\u0000')
