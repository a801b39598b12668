import { invalidRequest, invalidTarget, OAuthError } from '../errors.js'
import { MAX_PARAMETER_LENGTH } from './parameters.js'

/** The parameters of one token request: strings only, each at most once, empty ones dropped. */
export type TokenParameters = Readonly<Record<string, string | undefined>>

/** Parameter names we know, so that an error message never echoes a name an attacker chose. */
const KNOWN = new Set([
  'grant_type',
  'code',
  'code_verifier',
  'client_id',
  'redirect_uri',
  'refresh_token',
  'scope',
  'token',
  'token_type_hint',
  'resource',
  'device_code',
])

const nameFor = (name: string) => (KNOWN.has(name) ? name : 'a parameter')

/** The request media types RFC 6749 §3.2 (form) and DESIGN §3 (JSON) allow. */
export function assertTokenMediaType(contentType: string | undefined): void {
  const type = contentType?.split(';', 1)[0]!.trim().toLowerCase()
  if (type === undefined || type === '') return // no body: reported as missing parameters
  if (type !== 'application/x-www-form-urlencoded' && type !== 'application/json')
    throw new OAuthError(
      'invalid_request',
      'Send the parameters as application/x-www-form-urlencoded or application/json.',
      415,
    )
}

/**
 * Reads a form or JSON body into string parameters. A repeated parameter (RFC 6749 §3.2), a value
 * that is not a string, or an oversized one is invalid_request; an empty value counts as absent.
 * `resource` may be repeated in the form (RFC 8707 §2), but a token has one audience: more than one
 * is invalid_target, not a malformed request.
 */
export function readTokenParameters(body: unknown): TokenParameters {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalidRequest('The request body must be a set of named parameters.')
  const params: Record<string, string> = Object.create(null)
  for (const [name, value] of Object.entries(body)) {
    if (Array.isArray(value) && name === 'resource')
      throw invalidTarget('Name one resource per token request: an access token has one audience.')
    if (Array.isArray(value)) throw invalidRequest(`${nameFor(name)} must not be repeated.`)
    if (typeof value !== 'string') throw invalidRequest(`${nameFor(name)} must be a string.`)
    if (value.length > MAX_PARAMETER_LENGTH) throw invalidRequest(`${nameFor(name)} is too long.`)
    if (value !== '') params[name] = value
  }
  return params
}

export function requireParameter(params: TokenParameters, name: string): string {
  const value = params[name]
  if (value === undefined) throw invalidRequest(`${name} is required.`)
  return value
}
