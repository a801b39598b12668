/**
 * Everything the CLI knows of linkauth it reads from published metadata, starting from the links
 * API's address alone: the API's 401 names its protected-resource metadata (RFC 9728 §5.1), which
 * names the authorization server, the resource identifier and the scopes; the authorization
 * server's metadata (RFC 8414) names every endpoint.
 */
import { CliFailure, checkTransport, request } from './http.js'

export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code'

export interface ServerMetadata {
  issuer: string
  token_endpoint: string
  device_authorization_endpoint?: string
  revocation_endpoint?: string
  registration_endpoint?: string
  grant_types_supported?: string[]
  client_id_metadata_document_supported?: boolean
}

export interface Discovered {
  api: string
  resource: string
  scopes: string[]
  resourceName: string | undefined
  server: ServerMetadata
}

/** RFC 8414 §3 / RFC 9728 §3.1: the well-known name inserted between the origin and the path. */
export function wellKnownUrl(identifier: string, name: string): string {
  const url = new URL(identifier)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  return `${url.origin}/.well-known/${name}${path}`
}

/** resource_metadata="…" of a WWW-Authenticate header. */
function resourceMetadataUrl(header: string | null): string | undefined {
  return header ? /resource_metadata="([^"]+)"/.exec(header)?.[1] : undefined
}

export async function serverMetadata(issuer: string): Promise<ServerMetadata> {
  checkTransport(issuer, 'The authorization server')
  const answer = await request(wellKnownUrl(issuer, 'oauth-authorization-server'))
  const meta = answer.json as ServerMetadata | undefined
  if (answer.status !== 200 || !meta)
    throw new CliFailure(`${issuer} publishes no authorization server metadata.`)
  // RFC 8414 §3.3: the document must name the issuer it was fetched for.
  if (meta.issuer !== issuer)
    throw new CliFailure(`${issuer}'s metadata names another issuer (${String(meta.issuer)}); refusing it.`)
  return meta
}

export async function discover(api: string): Promise<Discovered> {
  const base = api.replace(/\/$/, '')
  checkTransport(base, 'The links API address')
  const probe = await request(`${base}/api/links`)
  const metadataUrl = resourceMetadataUrl(probe.headers.get('www-authenticate'))
  if (probe.status !== 401 || !metadataUrl)
    throw new CliFailure(`${base} does not look like the links API (no protected-resource metadata named).`)
  const answer = await request(metadataUrl)
  const prm = answer.json as
    | {
        resource?: string
        authorization_servers?: string[]
        scopes_supported?: string[]
        resource_name?: string
      }
    | undefined
  if (answer.status !== 200 || typeof prm?.resource !== 'string')
    throw new CliFailure(`${metadataUrl} is not protected-resource metadata.`)
  // RFC 9728 §3.3: the metadata must be for the resource whose well-known URL served it.
  if (wellKnownUrl(prm.resource, 'oauth-protected-resource') !== metadataUrl)
    throw new CliFailure(`${metadataUrl} describes another resource (${prm.resource}); refusing it.`)
  const issuer = prm.authorization_servers?.[0]
  if (!issuer) throw new CliFailure(`${metadataUrl} names no authorization server.`)
  const server = await serverMetadata(issuer)
  if (
    !server.device_authorization_endpoint ||
    !server.grant_types_supported?.includes(DEVICE_CODE_GRANT_TYPE)
  )
    throw new CliFailure(`${issuer} does not offer the device authorization grant (RFC 8628).`)
  return {
    api: base,
    resource: prm.resource,
    scopes: prm.scopes_supported ?? [],
    resourceName: prm.resource_name,
    server,
  }
}
