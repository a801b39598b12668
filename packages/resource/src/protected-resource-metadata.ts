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
}

export interface ProtectedResourceMetadataInput {
  resource: string
  issuer: string
  scopes?: readonly string[]
  resourceName?: string
}

/** The document; members without a value are left out (RFC 9728 §3.2: zero elements, omitted). */
export function protectedResourceMetadata(input: ProtectedResourceMetadataInput): ProtectedResourceMetadata {
  return {
    resource: input.resource,
    authorization_servers: [input.issuer],
    ...(input.scopes && input.scopes.length > 0 ? { scopes_supported: [...input.scopes] } : {}),
    bearer_methods_supported: ['header'],
    ...(input.resourceName ? { resource_name: input.resourceName } : {}),
  }
}
