import type { OAuthErrorCode } from '../errors.js'
import { isValidS256Challenge } from '../lib/pkce.js'
import { resourceIdentifierProblem } from '@linkauth/resource/token-contract'
import { isKnownScope, isSubset, normalizeScopes, parseScopeParameter } from '../lib/scopes.js'
import type { Locale } from '../web/i18n/locales.js'
import { localeOfUiLocales } from '../web/i18n/negotiate.js'

/** The query as Fastify parses it: a repeated parameter arrives as an array. */
export type RawQuery = Record<string, string | string[] | undefined>

export type PromptValue = 'none' | 'login' | 'consent'

/** A request that passed every check of RFC 6749 §4.1.1 and RFC 7636 §4.3. */
export interface AuthorizationRequest {
  clientId: string
  redirectUri: string
  scopes: string[]
  state: string | null
  codeChallenge: string
  prompt: PromptValue[]
  /** RFC 8707 resource indicators, in the order sent; empty when none was named. */
  resources: string[]
  /** RFC 9449 §10: the thumbprint of the DPoP key the code is to be bound to; null when not sent. */
  dpopJkt: string | null
  /** OIDC Core §3.1.2.1 ui_locales: the first of its languages the pages speak; null when none. */
  uiLocale?: Locale | null
}

export type ClientTargetResult =
  { ok: true; clientId: string; redirectUri: string } | { ok: false; description: string }

export type ValidationResult =
  | {
      ok: true
      request: AuthorizationRequest
      /** It named no scope: `scopes` are the client's defaults (RFC 6749 §3.3), to be narrowed by `resource`. */
      scopesDefaulted: boolean
    }
  | { ok: false; error: OAuthErrorCode; description: string; state: string | null }

/** RFC 6749 §3.1: parameters we know and that must not appear twice (`resource` may: RFC 8707 §2). */
export const SINGLE_AUTHORIZATION_PARAMETERS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'dpop_jkt',
  'ui_locales',
]
const MAX_STATE_BYTES = 1024
/** RFC 7638 SHA-256 thumbprint, base64url: 43 characters. */
const JKT = /^[A-Za-z0-9_-]{43}$/

/** RFC 6749 §3.1: a parameter sent without a value is treated as omitted. */
function single(query: RawQuery, name: string): string | undefined {
  const value = query[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Step one: who to answer, and where. Until this passes nothing may redirect (RFC 6749 §4.1.2.1,
 * RFC 9700 §4.1): the caller then checks the client and compares redirect_uri exactly.
 */
export function readClientTarget(query: RawQuery): ClientTargetResult {
  if (Array.isArray(query.client_id)) return { ok: false, description: 'client_id is repeated.' }
  if (Array.isArray(query.redirect_uri)) return { ok: false, description: 'redirect_uri is repeated.' }
  const clientId = single(query, 'client_id')
  const redirectUri = single(query, 'redirect_uri')
  if (!clientId) return { ok: false, description: 'The request has no client_id.' }
  if (!redirectUri) return { ok: false, description: 'The request has no redirect_uri.' }
  return { ok: true, clientId, redirectUri }
}

/**
 * A state we keep (it is stored with a pending request) and echo: at most 1 KiB and no control
 * characters (RFC 6749 Appendix A.5 allows printable characters only; PostgreSQL cannot store NUL).
 */
function isAcceptableState(state: string): boolean {
  return Buffer.byteLength(state) <= MAX_STATE_BYTES && !/\p{Cc}/u.test(state)
}

/** State to echo in an error redirect: only a single, acceptable value. */
function echoableState(query: RawQuery): string | null {
  const state = single(query, 'state')
  return state !== undefined && isAcceptableState(state) ? state : null
}

/**
 * Step two, once the redirect_uri is trusted: every other parameter, in a fixed order, so that
 * each failure has one predictable error code. Unknown parameters are ignored (RFC 6749 §3.1).
 * Without `scope` the request gets `defaultScopes` (RFC 6749 §3.3); without those either (the one-
 * statement path, which does not read the client), `scope` is required.
 */
export function validateAuthorizationParameters(
  query: RawQuery,
  target: {
    clientId: string
    redirectUri: string
    allowedScopes: readonly string[]
    defaultScopes?: readonly string[]
  },
): ValidationResult {
  const state = echoableState(query)
  const fail = (error: OAuthErrorCode, description: string): ValidationResult => ({
    ok: false,
    error,
    description,
    state,
  })

  const repeated = SINGLE_AUTHORIZATION_PARAMETERS.find((name) => Array.isArray(query[name]))
  if (repeated) return fail('invalid_request', `${repeated} is repeated.`)

  const responseType = single(query, 'response_type')
  if (responseType !== undefined && responseType !== 'code') {
    return fail('unsupported_response_type', 'Only response_type=code is supported.')
  }

  const challenge = single(query, 'code_challenge')
  if (challenge === undefined) return fail('invalid_request', 'code_challenge is required (PKCE, S256).')
  if (!isValidS256Challenge(challenge)) {
    return fail('invalid_request', 'code_challenge must be 43 characters of base64url (S256).')
  }
  const method = single(query, 'code_challenge_method')
  if (method !== undefined && method !== 'S256') {
    return fail('invalid_request', 'code_challenge_method must be S256.')
  }

  const scopeParameter = single(query, 'scope')
  const scopesDefaulted = scopeParameter === undefined
  if (scopesDefaulted && !target.defaultScopes) return fail('invalid_scope', 'scope is required.')
  const scopes = scopesDefaulted
    ? normalizeScopes(target.defaultScopes ?? [])
    : parseScopeParameter(scopeParameter)
  if (!scopes) return fail('invalid_scope', 'scope must be scope names separated by single spaces.')
  const unknown = scopes.find((s) => !isKnownScope(s))
  if (unknown !== undefined) return fail('invalid_scope', `Unknown scope: ${unknown}.`)
  if (!isSubset(scopes, target.allowedScopes)) {
    return fail('invalid_scope', 'This application may not ask for some of these scopes.')
  }

  const resources = readResources(query.resource)
  if (typeof resources === 'string') return fail('invalid_target', resources)

  const dpopJkt = single(query, 'dpop_jkt') ?? null
  if (dpopJkt !== null && !JKT.test(dpopJkt))
    return fail('invalid_request', 'dpop_jkt must be a SHA-256 JWK thumbprint: 43 characters of base64url.')

  const prompt = parsePrompt(single(query, 'prompt'))
  if (!prompt) return fail('invalid_request', 'prompt must be none, login or consent.')

  const uiLocale = localeOfUiLocales(single(query, 'ui_locales'))

  const rawState = single(query, 'state')
  if (rawState !== undefined && !isAcceptableState(rawState)) {
    return fail(
      'invalid_request',
      `state must be at most ${MAX_STATE_BYTES} bytes, without control characters.`,
    )
  }

  return {
    ok: true,
    request: {
      clientId: target.clientId,
      redirectUri: target.redirectUri,
      scopes,
      state: rawState ?? null,
      codeChallenge: challenge,
      prompt,
      resources,
      dpopJkt,
      ...(uiLocale ? { uiLocale } : {}),
    },
    scopesDefaulted,
  }
}

/**
 * RFC 8707 §2: `resource` may be sent several times, each an identifier of its own. Whether each is
 * registered is the caller's question (it needs the database); this is the syntax. A string is why not.
 */
function readResources(value: string | string[] | undefined): string[] | string {
  if (value === undefined || value === '') return []
  const resources = [value].flat()
  for (const resource of resources) {
    const problem = resourceIdentifierProblem(resource)
    if (problem) return `resource ${problem}.`
  }
  if (new Set(resources).size !== resources.length) return 'resource is repeated with the same value.'
  return resources
}

/** OIDC Core §3.1.2.1 prompt: space-separated; `none` stands alone. Null when invalid. */
export function parsePrompt(value: string | undefined): PromptValue[] | null {
  if (value === undefined) return []
  const values = value.split(' ')
  if (!values.every((v): v is PromptValue => v === 'none' || v === 'login' || v === 'consent')) return null
  if (new Set(values).size !== values.length) return null
  if (values.includes('none') && values.length > 1) return null
  return values
}
