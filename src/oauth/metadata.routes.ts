import type { FastifyInstance } from 'fastify'
import { LOCALES } from '../web/i18n/locales.js'
import type { Config } from '../config.js'
import { ALL_SCOPES } from '../lib/scopes.js'
import type { ResourceServerService } from '../resource-servers/resource-server.service.js'
import { publicDocumentCors } from '../web/cors.js'
import { DPOP_SIGNING_ALGS } from './dpop.service.js'
import { SUPPORTED_GRANT_TYPES } from './token.routes.js'

/**
 * RFC 8414 authorization server metadata; the issuer is exactly config.issuer. Of RFC 8707 and
 * RFC 9728, only RFC 9728 §4 defines a member for it: protected_resources, the registered resource
 * identifiers, which a client may cross-check against an API's authorization_servers (§7.6).
 */
export function authorizationServerMetadata(
  config: Pick<Config, 'issuer' | 'clientMetadataDocuments' | 'dynamicRegistration' | 'requirePar'>,
  protectedResources: readonly string[] = [],
) {
  const issuer = config.issuer
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/token`,
    // RFC 8628 §4: where a device (a CLI, an agent on another machine) starts the device grant.
    device_authorization_endpoint: `${issuer}/api/oauth/device_authorization`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
    introspection_endpoint: `${issuer}/api/oauth/introspect`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: ALL_SCOPES,
    // RFC 8414 §2 / OIDC Discovery: the languages of our pages, which ui_locales chooses among.
    ui_locales_supported: LOCALES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: SUPPORTED_GRANT_TYPES,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
    authorization_response_iss_parameter_supported: true,
    // Extension: where resource servers subscribe to revocation events (docs/integrating.md, "Events").
    revocation_event_streams_endpoint: `${issuer}/api/events/streams`,
    protected_resources: protectedResources,
    // RFC 9449 §5.1: the algorithms a DPoP proof may be signed with.
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
    // RFC 9126 §5: where clients push authorization requests, and whether every client must.
    pushed_authorization_request_endpoint: `${issuer}/api/oauth/par`,
    require_pushed_authorization_requests: config.requirePar,
    // draft-ietf-oauth-client-id-metadata-document: an https client_id URL names its own metadata.
    client_id_metadata_document_supported: config.clientMetadataDocuments,
    // RFC 7591: open, or with the operator's initial access token; absent when turned off.
    ...(config.dynamicRegistration !== 'off'
      ? { registration_endpoint: `${issuer}/api/oauth/register` }
      : {}),
  }
}

export function metadataRoutes(
  config: Pick<Config, 'issuer' | 'clientMetadataDocuments' | 'dynamicRegistration' | 'requirePar'>,
  resourceServers: Pick<ResourceServerService, 'protectedResources'>,
) {
  // The service hands back the same list until it changes, so the document is built once per list.
  let built: { from: readonly string[]; metadata: ReturnType<typeof authorizationServerMetadata> } | undefined
  return async (app: FastifyInstance) => {
    publicDocumentCors(app, '/.well-known/oauth-authorization-server')
    app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
      const resources = await resourceServers.protectedResources()
      if (built?.from !== resources)
        built = { from: resources, metadata: authorizationServerMetadata(config, resources) }
      // Short enough that a newly registered API is listed to clients within minutes.
      reply.header('cache-control', 'public, max-age=300')
      return built.metadata
    })
  }
}
