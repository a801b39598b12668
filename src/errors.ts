/**
 * Errors with a stable code, turned into HTTP answers in one place (the error handler plugin).
 * OAuthError: RFC 6749 §4.1.2.1 / §5.2 error codes. ProblemError: RFC 9457 problem details.
 */

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  /** RFC 8707 §2: a resource indicator that is malformed, unknown, or not allowed here. */
  | 'invalid_target'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'invalid_token'
  | 'server_error'
  | 'temporarily_unavailable'
  /** The revocation event feed: no such stream (unknown, swept, or another resource server's). */
  | 'invalid_stream'
  /** RFC 9449 §5: the DPoP proof is missing where required, or invalid. */
  | 'invalid_dpop_proof'
  /** RFC 9449 §8: retry with the nonce in the DPoP-Nonce header. */
  | 'use_dpop_nonce'
  /** RFC 7591 §3.2.2: a redirect URI of a registration request is not acceptable. */
  | 'invalid_redirect_uri'
  /** RFC 7591 §3.2.2: another field of a registration request is not acceptable. */
  | 'invalid_client_metadata'
  /** RFC 8628 §3.5: the device's user has not answered yet; poll again after the interval. */
  | 'authorization_pending'
  /** RFC 8628 §3.5: polled too soon; the interval is now 5 seconds longer. */
  | 'slow_down'
  /** RFC 8628 §3.5: the device code expired; start again. */
  | 'expired_token'

const DEFAULT_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  unsupported_token_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  access_denied: 403,
  login_required: 401,
  consent_required: 403,
  invalid_token: 401,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_stream: 404,
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
}

export class OAuthError extends Error {
  override name = 'OAuthError'
  readonly status: number
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    status?: number,
  ) {
    super(`${code}: ${description}`)
    this.status = status ?? DEFAULT_STATUS[code]
  }

  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description }
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description)
export const invalidClient = (description: string) => new OAuthError('invalid_client', description)
export const invalidGrant = (description: string) => new OAuthError('invalid_grant', description)
export const invalidScope = (description: string) => new OAuthError('invalid_scope', description)
export const invalidTarget = (description: string) => new OAuthError('invalid_target', description)
/** Public clients authenticate by client_id alone: one that is unknown or disabled is invalid_client. */
export const unknownClient = () => invalidClient('Unknown or disabled client.')

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail?: string
  /** The request field the problem is about, when there is one. */
  field?: string
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
}

export function statusTitle(status: number): string {
  return TITLES[status] ?? 'Error'
}

export class ProblemError extends Error {
  override name = 'ProblemError'
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly field?: string,
  ) {
    super(detail)
  }

  toJSON(): ProblemBody {
    return {
      type: 'about:blank',
      title: statusTitle(this.status),
      status: this.status,
      detail: this.detail,
      ...(this.field ? { field: this.field } : {}),
    }
  }
}

/**
 * A rate limit refused the request: 429 with Retry-After. `limit` names the limit (a label of
 * linkauth_rate_limited_total); the answer never says which key (account, address) it counted.
 */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError'
  readonly retryAfterSeconds: number
  constructor(
    readonly limit: string,
    retryAfterMs: number,
  ) {
    super(`rate limited: ${limit}`)
    this.retryAfterSeconds = retryAfterSeconds(retryAfterMs)
  }
}

/** Retry-After in whole seconds, rounded up and at least 1: a client waiting that long is let in. */
export const retryAfterSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000))

/** The database cannot be reached or went away: answer 503, never a 500. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError'
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/** Recognises a database that is down, restarting or unreachable (pg and PGlite errors). */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true
  if (!(err instanceof Error)) return false
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string') {
    // SQLSTATE class 08 (connection exception), 57P01-57P05 (shutdown, cannot connect now, ...), 53300 too many connections,
    // 57014 query_canceled: the statement outlived statement_timeout (a lock held too long, an overloaded
    // server) and was rolled back, so nothing was written and the same request may be sent again.
    if (code.startsWith('08') || /^57P0[1-5]$/.test(code) || code === '53300' || code === '57014') return true
    if (UNAVAILABLE_CODES.has(code)) return true
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|PGlite is closed/i.test(
    err.message,
  )
}
