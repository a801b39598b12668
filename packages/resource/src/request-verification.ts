/**
 * The rules a request's token must pass (RFC 6750, RFC 9449 §7): signature and claims, not revoked,
 * active by introspection while the feed is stale, the scopes asked for; a bearer token that is not
 * DPoP-bound, or a DPoP-bound one with a proof made with its key. Plain functions over what the
 * verifier holds (VerificationDeps); createResourceVerifier wires them.
 */
import type { AccessTokenClaims, JwksTokenVerifier } from './jwks-token-verifier.js'
import { authorizationToken } from './authorization-header.js'
import { DpopProofError } from './dpop-proof-error.js'
import { verifyDpopProof } from './dpop-proof.js'
import {
  DpopProofRefusedError,
  InsufficientScopeError,
  invalidToken,
  missingToken,
  ResourceAuthError,
} from './errors.js'
import type { IntrospectionClient } from './introspection-client.js'
import type { DpopInForce } from './resource-verifier-options.js'
import type { RevocationSet } from './revocation-set.js'
import type { VerifierMode } from './verifier-mode.js'

/** The parts of an HTTP request that authenticate it. */
export interface ResourceRequest {
  /** The Authorization header: `Bearer <token>` or `DPoP <token>`. */
  authorization: string | undefined
  /** The DPoP header(s), as the framework gives them (several are refused). */
  dpop?: string | string[] | undefined
  /** The method and the URL the client called (public scheme, host, path), for `htm` and `htu`. */
  method: string
  url: string | URL
}

export interface VerificationDeps {
  tokens: JwksTokenVerifier
  revocations: RevocationSet
  /** Present in introspection mode and with the feed (for the fallback). */
  introspection: IntrospectionClient | undefined
  currentMode: () => VerifierMode
  /** Undefined when the DPoP scheme is refused. */
  dpop: DpopInForce | undefined
  now: () => Date
}

/** The token itself: signature, claims, the revocation set, introspection when the feed is stale. */
async function activeClaims(deps: VerificationDeps, token: string): Promise<AccessTokenClaims> {
  const claims = await deps.tokens.verify(token)
  if (deps.revocations.revokedBy(claims))
    throw invalidToken('token_revoked', 'The access token has been revoked.')
  if (deps.currentMode() !== 'local') await deps.introspection!.assertActive(token, claims)
  return claims
}

function withScopes(claims: AccessTokenClaims, requiredScopes: readonly string[]): AccessTokenClaims {
  if (!requiredScopes.every((scope) => claims.scopes.includes(scope)))
    throw new InsufficientScopeError(requiredScopes)
  return claims
}

/** RFC 9449 §7.2: a bound token must come with its proof; as a bearer token it is refused. */
export async function verifyBearer(
  deps: VerificationDeps,
  token: string,
  requiredScopes: readonly string[],
): Promise<AccessTokenClaims> {
  if (deps.dpop?.required)
    throw invalidToken('dpop_required', 'This API accepts DPoP-bound access tokens only.').as('DPoP')
  const claims = await activeClaims(deps, token)
  if (claims.cnf)
    throw invalidToken(
      'dpop_bound_token',
      'The access token is DPoP-bound: send it with the DPoP scheme and a DPoP proof.',
    )
  return withScopes(claims, requiredScopes)
}

async function verifyDpop(
  deps: VerificationDeps,
  request: ResourceRequest,
  token: string,
  requiredScopes: readonly string[],
): Promise<AccessTokenClaims> {
  const settings = deps.dpop!
  const claims = await activeClaims(deps, token)
  if (!claims.cnf)
    throw invalidToken('token_not_bound', 'The access token is not DPoP-bound; send it as a Bearer token.')
  let jkt: string
  try {
    ;({ jkt } = await verifyDpopProof(request.dpop, {
      method: request.method,
      url: request.url,
      accessToken: token,
      algorithms: settings.algorithms,
      replayStore: settings.replayStore,
      nonce: settings.nonce ? (n) => settings.nonce!.accepts(n) : undefined,
      now: deps.now().getTime() / 1000,
      maxAgeSeconds: settings.maxAgeSeconds,
      clockSkewSeconds: settings.clockSkewSeconds,
    }))
  } catch (err) {
    if (!(err instanceof DpopProofError)) throw err
    throw new DpopProofRefusedError(
      err.error,
      err.error === 'use_dpop_nonce' ? 'The API requires a fresh DPoP nonce in the proof.' : err.description,
      err.code,
    )
  }
  // §7.1: "Invalid DPoP key binding" is an invalid_token, in a DPoP challenge.
  if (jkt !== claims.cnf.jkt)
    throw invalidToken(
      'dpop_key_mismatch',
      'The DPoP proof was not made with the key the access token is bound to.',
    ).as('DPoP')
  return withScopes(claims, requiredScopes)
}

/** A bearer token, or a DPoP-bound one with its proof; every refusal of the latter in a DPoP challenge. */
export async function verifyRequest(
  deps: VerificationDeps,
  request: ResourceRequest,
  requiredScopes: readonly string[],
): Promise<AccessTokenClaims> {
  const { scheme, token } = authorizationToken(request.authorization)
  if (scheme === 'Bearer') return verifyBearer(deps, token, requiredScopes)
  // The DPoP scheme where it is refused: no credentials this API takes (RFC 7235 §2.1).
  if (!deps.dpop) throw missingToken()
  try {
    return await verifyDpop(deps, request, token, requiredScopes)
  } catch (err) {
    // Whatever is wrong with a DPoP request is answered with a DPoP challenge (§7.1).
    throw err instanceof ResourceAuthError ? err.as('DPoP') : err
  }
}
