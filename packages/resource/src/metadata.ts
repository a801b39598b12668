import { type Fetch, jsonObject, REQUEST_TIMEOUT_MS } from './http.js'

/** The members of the RFC 8414 document the verifier uses. */
export interface AuthorizationServerMetadata {
  issuer: string
  jwksUri: URL
  introspectionEndpoint: URL | undefined
  /** linkauth's extension: where revocation event streams (RFC 8936 polling) are created. */
  revocationEventStreamsEndpoint: URL | undefined
  /** RFC 9728 §4 `protected_resources`: the APIs the server issues tokens for; undefined when absent. */
  protectedResources: string[] | undefined
}

/** The member when it is a list of strings; anything else is treated as absent (it is advisory). */
function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined
}

function endpoint(document: Record<string, unknown>, member: string): URL | undefined {
  const value = document[member]
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !URL.canParse(value))
    throw new Error(`authorization server metadata: ${member} is not a URL`)
  return new URL(value)
}

/**
 * Fetches `<issuer>/.well-known/oauth-authorization-server` and checks that it speaks for exactly
 * this issuer (RFC 8414 §3.3), so that a document served elsewhere cannot redirect key discovery.
 */
export async function discoverMetadata(
  issuer: string,
  fetchImpl: Fetch,
): Promise<AuthorizationServerMetadata> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/oauth-authorization-server`
  const res = await fetchImpl(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const document = await jsonObject(res, `authorization server metadata at ${url}`)
  if (document.issuer !== issuer)
    throw new Error(
      `authorization server metadata: issuer ${JSON.stringify(document.issuer)} is not ${issuer}`,
    )
  const jwksUri = endpoint(document, 'jwks_uri')
  if (!jwksUri) throw new Error('authorization server metadata: no jwks_uri')
  return {
    issuer,
    jwksUri,
    introspectionEndpoint: endpoint(document, 'introspection_endpoint'),
    revocationEventStreamsEndpoint: endpoint(document, 'revocation_event_streams_endpoint'),
    protectedResources: stringList(document.protected_resources),
  }
}
