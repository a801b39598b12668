/**
 * @linkauth/resource: what a resource API needs to accept linkauth access tokens. Local verification
 * (RFC 9068, keys from the JWKS) with instant revocation from the authorization server's event feed,
 * falling back to introspection (RFC 7662) when the feed is stale; errors as RFC 6750 answers; a
 * Fastify plugin.
 */
export type { AccessTokenClaims } from './jwks-token-verifier.js'
export {
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  ResourceAuthError,
  type ResourceAuthErrorCode,
  VerifierUnavailableError,
} from './errors.js'
export { linkauthResource, type LinkauthResourceOptions } from './fastify-plugin.js'
export type { ResourceLogger } from './logger.js'
export {
  createResourceVerifier,
  type ResourceVerifier,
  type ResourceVerifierOptions,
  type VerifierMode,
} from './resource-verifier.js'
export type { AccessTokenFailure, SignedAccessTokenClaims } from './token-contract.js'
