import type { AccessTokenClaims } from './jwks-token-verifier.js'
import type { ResourceAuthError } from './errors.js'
import {
  type ChallengeContext,
  challengeOf,
  InsufficientScopeError,
  VerifierUnavailableError,
} from './errors.js'
import { protectedResourceMetadata, type ProtectedResourceMetadata } from './protected-resource-metadata.js'
import { protectedResourceMetadataUrl } from './resource-identifier.js'
import type { ResourceVerifier } from './resource-verifier.js'

/** An HTTP refusal, framework-neutral: the status, its headers (challenges) and the RFC 6750 body. */
export interface Refusal {
  status: number
  headers: Record<string, string | string[]>
  body: ReturnType<ResourceAuthError['toJSON']>
}

/**
 * The challenges of a refusal. A DPoP request (or a DPoP-only API) is answered with a `DPoP`
 * challenge carrying the error (RFC 9449 §7.1); a bearer request with a `Bearer` one, followed, where
 * the API takes DPoP tokens too, by a bare `DPoP` challenge naming the proof algorithms, so a client
 * learns both schemes from one 401 (RFC 9449 §7.2, RFC 7235 §4.1).
 */
function challenges(err: ResourceAuthError, context: ChallengeContext, verifier: ResourceVerifier): string[] {
  const dpop = verifier.dpop
  const dpopContext: ChallengeContext = { ...context, scheme: 'DPoP', dpopAlgorithms: dpop?.algorithms }
  if (dpop && (err.scheme === 'DPoP' || (dpop.required && err.code === 'missing_token')))
    return [err.challenge(dpopContext)]
  const bearer = err.challenge({ ...context, scheme: 'Bearer' })
  return dpop ? [bearer, challengeOf(dpopContext)] : [bearer]
}

/** The answer to a refused request: challenges naming the metadata document, never cached. */
export function refusalOf(
  err: ResourceAuthError,
  context: ChallengeContext,
  verifier: ResourceVerifier,
): Refusal {
  const headers: Record<string, string | string[]> = { 'cache-control': 'no-store' }
  if (err instanceof VerifierUnavailableError) headers['retry-after'] = String(err.retryAfterSeconds)
  else {
    const list = challenges(err, context, verifier)
    headers['www-authenticate'] = list.length === 1 ? list[0]! : list
  }
  // RFC 9449 §9: the nonce to put in the next proof comes with the refusal that asks for it.
  if (err.error === 'use_dpop_nonce' && verifier.dpop?.nonce)
    headers['dpop-nonce'] = verifier.dpop.nonce.current()
  return { status: err.status, headers, body: err.toJSON() }
}

export interface ProtectedEndpointOptions {
  /** The verifier of the endpoint's own resource identifier (its canonical URL, for an MCP server). */
  verifier: ResourceVerifier
  realm?: string
  /** `resource_name` of the metadata document. */
  resourceName?: string
  /** `scopes_supported` of the metadata document. */
  scopesSupported?: readonly string[]
  /**
   * The origin clients call (scheme, host, any prefix before the request's path), for a DPoP
   * proof's `htu`. Default: the origin of the resource identifier.
   */
  publicUrl?: string
}

/** The request parts authentication reads; `path` is the request target (path and query). */
export interface EndpointRequest {
  authorization: string | undefined
  dpop?: string | string[] | undefined
  method: string
  path: string
}

/** One protected endpoint (an MCP server, say): its metadata document, its checks and its refusals. */
export interface ProtectedEndpoint {
  readonly resource: string
  /** RFC 9728 §3.1: where the document lives, derived from the resource identifier. */
  readonly metadataUrl: string
  /** The same URL's path, for a router. */
  readonly metadataPath: string
  readonly metadata: ProtectedResourceMetadata
  /**
   * A bearer or DPoP request checked for `scopes` (all of them). Throws a ResourceAuthError; a
   * missing scope is an InsufficientScopeError whose challenge names the token's scopes and the
   * missing ones together (see {@link stepUp}).
   */
  authenticate(request: EndpointRequest, scopes?: readonly string[]): Promise<AccessTokenClaims>
  /**
   * undefined when `claims` grant every scope in `needed`; else the 403 to answer. Its `scope` is
   * what the token has (of this endpoint's scopes) plus what is missing: MCP 2025-11-25 clients
   * (the TypeScript SDK among them) ask for exactly the challenge's scope, and a client that lost
   * its read scope to gain a write one would be back at the next read.
   */
  stepUp(claims: AccessTokenClaims, needed: readonly string[]): InsufficientScopeError | undefined
  /** The answer to a refusal: status, challenges with realm and resource_metadata, body. */
  refusal(err: ResourceAuthError): Refusal
}

/** Everything an endpoint with its own resource identifier needs to be discovered and protected. */
export function protectedEndpoint(options: ProtectedEndpointOptions): ProtectedEndpoint {
  const { verifier } = options
  const metadataUrl = protectedResourceMetadataUrl(verifier.resource)
  const context: ChallengeContext = { realm: options.realm, resourceMetadata: metadataUrl }
  const publicUrl = (options.publicUrl ?? new URL(verifier.resource).origin).replace(/\/+$/, '')
  const served = options.scopesSupported ?? []

  function stepUp(claims: AccessTokenClaims, needed: readonly string[]) {
    if (needed.every((scope) => claims.scopes.includes(scope))) return undefined
    const kept = claims.scopes.filter((scope) => served.length === 0 || served.includes(scope))
    return new InsufficientScopeError([...new Set([...kept, ...needed])])
  }

  return {
    resource: verifier.resource,
    metadataUrl,
    metadataPath: new URL(metadataUrl).pathname,
    metadata: protectedResourceMetadata({
      resource: verifier.resource,
      issuer: verifier.issuer,
      scopes: served,
      resourceName: options.resourceName,
      dpop: verifier.dpop,
    }),
    async authenticate(request, scopes = []) {
      const claims = await verifier.verifyRequest(
        {
          authorization: request.authorization,
          dpop: request.dpop,
          method: request.method,
          url: publicUrl + request.path,
        },
        [],
      )
      const refused = stepUp(claims, scopes)
      if (refused) throw refused
      return claims
    },
    stepUp,
    refusal: (err) => refusalOf(err, context, verifier),
  }
}
