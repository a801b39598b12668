/**
 * @linkauth/resource: what a resource API needs to accept linkauth access tokens. Local verification
 * (RFC 9068, keys from the JWKS) with instant revocation from the authorization server's event feed,
 * falling back to introspection (RFC 7662) when the feed is stale; errors as RFC 6750 answers; a
 * Fastify plugin that serves the API's protected-resource metadata (RFC 9728).
 */
export type { AccessTokenClaims } from './jwks-token-verifier.js'
export {
  type AuthScheme,
  type ChallengeContext,
  DpopProofRefusedError,
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  ResourceAuthError,
  type ResourceAuthErrorCode,
  VerifierUnavailableError,
} from './errors.js'
export { linkauthResource, type LinkauthResourceOptions } from './fastify-plugin.js'
export {
  authInfoOf,
  type McpAuthInfo,
  type McpTokenVerifier,
  mcpTokenVerifier,
} from './mcp-token-verifier.js'
export {
  type EndpointRequest,
  protectedEndpoint,
  type ProtectedEndpoint,
  type ProtectedEndpointOptions,
  type Refusal,
  refusalOf,
} from './protected-endpoint.js'
export type { ResourceLogger } from './logger.js'
export {
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
  type ProtectedResourceMetadataInput,
} from './protected-resource-metadata.js'
export {
  isResourceIdentifier,
  MAX_RESOURCE_IDENTIFIER_LENGTH,
  PROTECTED_RESOURCE_METADATA_PATH,
  protectedResourceMetadataUrl,
} from './resource-identifier.js'
export { createDpopNonceSource, type DpopNonceOptions, type DpopNonceSource } from './dpop-nonce.js'
export { createRedisReplayStore, type RedisSetNx } from './dpop-replay-store.js'
export {
  createResourceVerifier,
  type DpopSettings,
  type ResourceRequest,
  type ResourceVerifier,
  type ResourceVerifierOptions,
  type VerifierMode,
  type VerifierSettings,
} from './resource-verifier.js'
export type { AccessTokenFailure, ClientStanding, SignedAccessTokenClaims } from './token-contract.js'
export { CLIENT_STANDINGS, clientStandingOf, isClientStanding } from './token-contract.js'
