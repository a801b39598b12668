import { ALL_SCOPES, isKnownScope } from '../lib/scopes.js'
import { nameTextProblem } from './client-names.js'
import { displayUrlProblem } from './display-metadata.js'
import {
  CLIENT_GRANT_TYPES,
  DEFAULT_GRANT_TYPES,
  isClientGrantType,
  normalizeGrantTypes,
} from './grant-types.js'
import { redirectUriProblem } from './redirect-uri.js'

/**
 * Client metadata that an application states about itself (RFC 7591 §2), from a Client ID Metadata
 * Document or a dynamic registration request: the same rules for both, and the rules the operator's
 * registrations follow for redirect URIs. Public clients only: no secret, no authentication method
 * but `none`, no grant but the code, refresh and device (RFC 8628) grants.
 */

export interface StatedClientMetadata {
  name: string | null
  redirectUris: string[]
  /** The scopes it says it will ask for (known ones only); null: it did not say. */
  scopes: string[] | null
  homepageUrl: string | null
  privacyPolicyUrl: string | null
  termsUrl: string | null
  /** RFC 9126 §6 require_pushed_authorization_requests: its authorization requests must be pushed. */
  requirePar: boolean
  /** RFC 7591 §2 grant_types, sorted; the code and refresh grants when it did not say. Without the code grant, redirectUris may be empty. */
  grantTypes: string[]
}

/** What is wrong with stated metadata; `field` says whether the redirect URIs are the trouble (RFC 7591 §3.2.2). */
export class ClientMetadataProblem extends Error {
  override name = 'ClientMetadataProblem'
  constructor(
    message: string,
    readonly field: 'redirect_uris' | 'other' = 'other',
  ) {
    super(message)
  }
}

const NAME_MAX = 100
const URL_MAX = 2048
const MAX_REDIRECT_URIS = 10

function optionalDisplayUrl(body: Record<string, unknown>, field: string): string | null {
  const value = body[field]
  if (value === undefined || value === null) return null
  if (typeof value !== 'string') throw new ClientMetadataProblem(`${field} must be a string`)
  const problem = displayUrlProblem(value)
  if (problem) throw new ClientMetadataProblem(`${field} ${problem}`)
  return value
}

export function readStatedMetadata(body: unknown): StatedClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ClientMetadataProblem('the metadata must be a JSON object')
  const fields = body as Record<string, unknown>
  if ('client_secret' in fields || 'client_secret_expires_at' in fields)
    throw new ClientMetadataProblem('it contains a client secret: only public clients are accepted')
  const method = fields.token_endpoint_auth_method
  if (method !== undefined && method !== 'none')
    throw new ClientMetadataProblem('token_endpoint_auth_method must be "none" (public clients only)')
  const grantTypes = fields.grant_types
  if (grantTypes !== undefined) {
    if (
      !Array.isArray(grantTypes) ||
      grantTypes.length === 0 ||
      grantTypes.some((g) => typeof g !== 'string' || !isClientGrantType(g))
    )
      throw new ClientMetadataProblem(`grant_types may hold only ${CLIENT_GRANT_TYPES.join(', ')}`)
  }
  const responseTypes = fields.response_types
  if (responseTypes !== undefined) {
    if (!Array.isArray(responseTypes) || responseTypes.some((r) => r !== 'code'))
      throw new ClientMetadataProblem('response_types may hold only code')
  }

  const grants = Array.isArray(grantTypes) ? normalizeGrantTypes(grantTypes as string[]) : DEFAULT_GRANT_TYPES
  // RFC 7591 §2: redirect URIs are for redirect-based flows; a device-only client (a command-line
  // tool, RFC 8628) has none to give.
  const redirectUris = fields.redirect_uris ?? (grants.includes('authorization_code') ? undefined : [])
  if (!Array.isArray(redirectUris) || (redirectUris.length === 0 && grants.includes('authorization_code')))
    throw new ClientMetadataProblem(
      'redirect_uris must be a list of at least one URI (none only without the authorization_code grant)',
      'redirect_uris',
    )
  if (redirectUris.length > MAX_REDIRECT_URIS)
    throw new ClientMetadataProblem(
      `redirect_uris may hold at most ${MAX_REDIRECT_URIS} URIs`,
      'redirect_uris',
    )
  for (const uri of redirectUris) {
    if (typeof uri !== 'string')
      throw new ClientMetadataProblem('redirect_uris must hold strings', 'redirect_uris')
    const problem = redirectUriProblem(uri)
    if (problem)
      throw new ClientMetadataProblem(
        `redirect URI ${JSON.stringify(uri.slice(0, 200))} ${problem}`,
        'redirect_uris',
      )
  }
  if (new Set(redirectUris).size !== redirectUris.length)
    throw new ClientMetadataProblem('redirect_uris must not repeat a URI', 'redirect_uris')

  let name: string | null = null
  if (fields.client_name !== undefined && fields.client_name !== null) {
    if (typeof fields.client_name !== 'string')
      throw new ClientMetadataProblem('client_name must be a string')
    name = fields.client_name.trim()
    if (name === '' || name.length > NAME_MAX)
      throw new ClientMetadataProblem(`client_name must be 1 to ${NAME_MAX} characters of text on one line`)
    const problem = nameTextProblem(name)
    if (problem) throw new ClientMetadataProblem(problem)
  }
  const logo = fields.logo_uri
  if (logo !== undefined && logo !== null && (typeof logo !== 'string' || logo.length > URL_MAX))
    throw new ClientMetadataProblem(`logo_uri must be a URL of at most ${URL_MAX} characters`)

  let scopes: string[] | null = null
  if (fields.scope !== undefined && fields.scope !== null) {
    if (typeof fields.scope !== 'string' || fields.scope.length > 1000)
      throw new ClientMetadataProblem('scope must be a string of space-separated scopes')
    // Scopes of other servers (openid, …) are no business of ours: only ours limit the client.
    scopes = ALL_SCOPES.filter((s) => fields.scope === s || (fields.scope as string).split(' ').includes(s))
    if (scopes.length === 0) scopes = null
  }

  const requirePar = fields.require_pushed_authorization_requests
  if (requirePar !== undefined && typeof requirePar !== 'boolean')
    throw new ClientMetadataProblem('require_pushed_authorization_requests must be true or false')

  return {
    name,
    redirectUris: redirectUris as string[],
    scopes: scopes?.filter(isKnownScope) ?? null,
    homepageUrl: optionalDisplayUrl(fields, 'client_uri'),
    privacyPolicyUrl: optionalDisplayUrl(fields, 'policy_uri'),
    termsUrl: optionalDisplayUrl(fields, 'tos_uri'),
    requirePar: requirePar === true,
    grantTypes: grants,
  }
}
