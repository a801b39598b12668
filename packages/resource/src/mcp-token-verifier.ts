import type { AccessTokenClaims } from './jwks-token-verifier.js'
import { ResourceAuthError } from './errors.js'
import type { ResourceVerifier } from './resource-verifier.js'

/**
 * The MCP TypeScript SDK's `AuthInfo` (`@modelcontextprotocol/sdk/server/auth/types.js`), written out
 * so that this package needs no SDK at run time or to compile: the SDK takes it by its shape.
 */
export interface McpAuthInfo {
  token: string
  clientId: string
  scopes: string[]
  /** Seconds since the epoch. */
  expiresAt?: number
  /** RFC 8707: the resource the token is for; the SDK compares it with the server's. */
  resource?: URL
  /** `sub` (the user), `claims` (all of them). */
  extra?: Record<string, unknown>
}

/** The SDK's `OAuthTokenVerifier`, by its shape. */
export interface McpTokenVerifier {
  verifyAccessToken(token: string): Promise<McpAuthInfo>
}

/** What an MCP tool handler reads from `extra.authInfo` to know its user. */
export function authInfoOf(token: string, claims: AccessTokenClaims, resource: string): McpAuthInfo {
  return {
    token,
    clientId: claims.client_id,
    scopes: [...claims.scopes],
    expiresAt: claims.exp,
    resource: new URL(resource),
    extra: { sub: claims.sub, claims },
  }
}

/** The SDK's error classes its bearer middleware turns into 401 and 403 answers. */
interface SdkAuthErrors {
  InvalidTokenError: new (message: string) => Error
  InsufficientScopeError: new (message: string) => Error
}

// A variable, so that TypeScript does not look for the SDK: it is an optional peer of this package.
const SDK_ERRORS = '@modelcontextprotocol/sdk/server/auth/errors.js'
let sdkErrors: Promise<SdkAuthErrors | undefined> | undefined

/** The refusal as the SDK's own error, so `requireBearerAuth` answers 401/403 rather than 500. */
async function asSdkError(err: ResourceAuthError): Promise<Error> {
  sdkErrors ??= import(SDK_ERRORS).then(
    (m: SdkAuthErrors) => m,
    () => undefined,
  )
  const sdk = await sdkErrors
  if (!sdk || err.status === 503) return err
  return err.error === 'insufficient_scope'
    ? new sdk.InsufficientScopeError(err.description)
    : new sdk.InvalidTokenError(err.description)
}

/**
 * A verifier for the MCP SDK's `requireBearerAuth({ verifier })`: the token checked by `verifier`
 * (signature, issuer, audience = the MCP server's resource identifier, expiry, revocations), answered
 * as `AuthInfo`. Bearer tokens only: the SDK's middleware does not read DPoP proofs, so a DPoP-bound
 * token is refused here; {@link protectedEndpoint} takes both. Scopes are the middleware's
 * `requiredScopes` (or a tool's own check); refusals are the SDK's `InvalidTokenError`.
 */
export function mcpTokenVerifier(verifier: ResourceVerifier): McpTokenVerifier {
  return {
    async verifyAccessToken(token) {
      try {
        return authInfoOf(token, await verifier.verify(token), verifier.resource)
      } catch (err) {
        throw err instanceof ResourceAuthError ? await asSdkError(err) : err
      }
    },
  }
}
