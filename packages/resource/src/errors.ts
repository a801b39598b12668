/**
 * Why a request is refused, as RFC 6750 §3 answers. `error` is the RFC 6750 code a client sees;
 * `code` is finer and stable, for logs and for callers that switch on it (after jose's errors).
 * Descriptions are fixed English text and never contain the token.
 */

export type ResourceAuthErrorCode =
  | 'missing_token'
  | 'malformed_authorization'
  | 'multiple_methods'
  | 'unsupported_method'
  | 'malformed_token'
  | 'unsupported_alg'
  | 'unknown_key'
  | 'bad_signature'
  | 'wrong_type'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'invalid_claims'
  | 'token_expired'
  | 'token_not_yet_valid'
  | 'token_revoked'
  | 'token_inactive'
  | 'insufficient_scope'
  | 'verifier_unavailable'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'dpop_key_mismatch'
  | 'dpop_bound_token'
  | 'token_not_bound'
  | 'dpop_required'

export type BearerErrorCode =
  'invalid_request' | 'invalid_token' | 'insufficient_scope' | 'temporarily_unavailable'

/** RFC 9449 §7.1 and §9: the codes only a `DPoP` challenge carries. */
export type DpopChallengeErrorCode = 'invalid_dpop_proof' | 'use_dpop_nonce'

/** The authentication scheme of a challenge: RFC 6750's `Bearer`, or RFC 9449's `DPoP`. */
export type AuthScheme = 'Bearer' | 'DPoP'

/** RFC 6750 §3: error_description and scope values may only hold %x20-21 / %x23-5B / %x5D-7E. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '')}"`
}

/** What a challenge names besides the error: the protection space and where the API describes itself. */
export interface ChallengeContext {
  realm?: string | undefined
  /** The URL of the protected resource metadata (RFC 9728 §5.1). */
  resourceMetadata?: string | undefined
  /** The scheme of the challenge (default Bearer). */
  scheme?: AuthScheme | undefined
  /** RFC 9449 §7.1: `algs`, the proof algorithms a DPoP challenge accepts. */
  dpopAlgorithms?: readonly string[] | undefined
}

export abstract class ResourceAuthError extends Error {
  override name = 'ResourceAuthError'
  abstract readonly status: number
  /** The scheme whose challenge answers this refusal: DPoP for a DPoP request (RFC 9449 §7.1). */
  scheme: AuthScheme = 'Bearer'
  /** The RFC 6750 error code of the answer (body `error`, challenge `error=`). */
  abstract readonly error: BearerErrorCode | DpopChallengeErrorCode

  constructor(
    readonly code: ResourceAuthErrorCode,
    readonly description: string,
  ) {
    super(description)
  }

  /** Answer with this scheme's challenge; returns the error itself. */
  as(scheme: AuthScheme): this {
    this.scheme = scheme
    return this
  }

  /** The auth-params of the challenge after the realm; none for a request without credentials. */
  protected challengeParams(): string[] {
    return [`error=${quoted(this.error)}`, `error_description=${quoted(this.description)}`]
  }

  /**
   * The `WWW-Authenticate` value (RFC 6750 §3), with a realm and the URL of the API's metadata
   * document (`resource_metadata`, RFC 9728 §5.1) when given; a string is the realm alone.
   */
  challenge(context: string | ChallengeContext = {}): string {
    const options: ChallengeContext = typeof context === 'string' ? { realm: context } : context
    return challengeOf({ scheme: this.scheme, ...options }, this.challengeParams())
  }

  get wwwAuthenticate(): string {
    return this.challenge()
  }

  toJSON(): { error: BearerErrorCode | DpopChallengeErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description }
  }
}

/** 400: the Authorization header is not `Bearer <token>`, or the token came by more than one method. */
export class InvalidRequestError extends ResourceAuthError {
  override name = 'InvalidRequestError'
  readonly status = 400
  readonly error = 'invalid_request'
}

/** 401: no usable token. Without any token the challenge carries no error code (RFC 6750 §3.1). */
export class InvalidTokenError extends ResourceAuthError {
  override name = 'InvalidTokenError'
  readonly status = 401
  readonly error = 'invalid_token'

  protected override challengeParams(): string[] {
    return this.code === 'missing_token' ? [] : super.challengeParams()
  }
}

/** 403: a valid token without every scope the route needs; the challenge names them. */
export class InsufficientScopeError extends ResourceAuthError {
  override name = 'InsufficientScopeError'
  readonly status = 403
  readonly error = 'insufficient_scope'

  constructor(
    readonly requiredScopes: readonly string[],
    description = 'The access token does not grant every scope this request needs.',
  ) {
    super('insufficient_scope', description)
  }

  protected override challengeParams(): string[] {
    return [...super.challengeParams(), `scope=${quoted(this.requiredScopes.join(' '))}`]
  }
}

/**
 * 503: the verifier cannot decide (the revocation feed is stale and introspection does not answer).
 * Not a statement about the token, so the challenge is bare and the client may retry.
 */
export class VerifierUnavailableError extends ResourceAuthError {
  override name = 'VerifierUnavailableError'
  readonly status = 503
  readonly error = 'temporarily_unavailable'
  readonly retryAfterSeconds = 5

  constructor(description = 'The access token cannot be checked at the moment; retry shortly.') {
    super('verifier_unavailable', description)
  }

  protected override challengeParams(): string[] {
    return []
  }
}

/**
 * 401 with a `DPoP` challenge (RFC 9449 §7.1, §9): the proof is refused (`invalid_dpop_proof`), or
 * the API wants its nonce in the proof (`use_dpop_nonce`, with a `DPoP-Nonce` header). `failure` is
 * the verifier's finer reason, for logs.
 */
export class DpopProofRefusedError extends ResourceAuthError {
  override name = 'DpopProofRefusedError'
  override scheme: AuthScheme = 'DPoP'
  readonly status = 401
  readonly error: DpopChallengeErrorCode

  constructor(
    error: DpopChallengeErrorCode,
    description: string,
    readonly failure: string,
  ) {
    super(error, description)
    this.error = error
  }
}

/**
 * A challenge: the scheme, then realm, resource_metadata, `algs` for DPoP, and the error's params.
 * The scheme alone when there is nothing to say (RFC 6750 §3.1 for a request without a token).
 */
export function challengeOf(context: ChallengeContext, errorParams: readonly string[] = []): string {
  const scheme = context.scheme ?? 'Bearer'
  const { realm, resourceMetadata, dpopAlgorithms } = context
  const params = [
    ...(realm === undefined ? [] : [`realm=${quoted(realm)}`]),
    ...(resourceMetadata === undefined ? [] : [`resource_metadata=${quoted(resourceMetadata)}`]),
    ...(scheme === 'DPoP' && dpopAlgorithms?.length ? [`algs=${quoted(dpopAlgorithms.join(' '))}`] : []),
    ...errorParams,
  ]
  return params.length === 0 ? scheme : `${scheme} ${params.join(', ')}`
}

export const missingToken = () => new InvalidTokenError('missing_token', 'An access token is required.')
export const invalidToken = (code: ResourceAuthErrorCode, description: string) =>
  new InvalidTokenError(code, description)
