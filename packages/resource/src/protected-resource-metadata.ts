/** RFC 9728 §2: the members of a protected resource's metadata document that linkauth's APIs use. */
export interface ProtectedResourceMetadata {
  /** The resource identifier, exactly (clients compare it, RFC 9728 §3.3). */
  resource: string
  /** The issuers of the authorization servers whose tokens the API accepts. */
  authorization_servers: string[]
  scopes_supported?: string[]
  /** Only the Authorization header: a token in a URL ends up in logs (RFC 6750 §2.3). */
  bearer_methods_supported: ['header']
  resource_name?: string
  /** RFC 9728 §2: the DPoP proof algorithms accepted (RFC 9449), when the API takes DPoP tokens. */
  dpop_signing_alg_values_supported?: string[]
  /** RFC 9728 §2: true when only DPoP-bound tokens are accepted. */
  dpop_bound_access_tokens_required?: boolean
}

export interface ProtectedResourceMetadataInput {
  resource: string
  issuer: string
  scopes?: readonly string[]
  resourceName?: string
  /** The DPoP settings of the verifier; undefined when the DPoP scheme is refused. */
  dpop?: { algorithms: readonly string[]; required: boolean } | undefined
}

/** The document; members without a value are left out (RFC 9728 §3.2: zero elements, omitted). */
export function protectedResourceMetadata(input: ProtectedResourceMetadataInput): ProtectedResourceMetadata {
  return {
    resource: input.resource,
    authorization_servers: [input.issuer],
    ...(input.scopes && input.scopes.length > 0 ? { scopes_supported: [...input.scopes] } : {}),
    bearer_methods_supported: ['header'],
    ...(input.resourceName ? { resource_name: input.resourceName } : {}),
    ...(input.dpop
      ? {
          dpop_signing_alg_values_supported: [...input.dpop.algorithms],
          dpop_bound_access_tokens_required: input.dpop.required,
        }
      : {}),
  }
}
