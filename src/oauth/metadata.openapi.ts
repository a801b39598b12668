import { z } from 'zod'
import { ok, open, type Operations, tooManyParameters } from '../openapi/describe.js'

/** RFC 8414, exactly the members metadata.routes.ts answers. */
export const authorizationServerMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  device_authorization_endpoint: z
    .string()
    .meta({ description: 'RFC 8628 §4: the device authorization endpoint.' }),
  revocation_endpoint: z.string(),
  introspection_endpoint: z.string(),
  jwks_uri: z.string(),
  scopes_supported: z.array(z.string()),
  ui_locales_supported: z.array(z.string()).meta({ description: 'The languages of the pages (ui_locales).' }),
  response_types_supported: z.array(z.literal('code')),
  response_modes_supported: z.array(z.literal('query')),
  grant_types_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.literal('S256')),
  token_endpoint_auth_methods_supported: z.array(z.literal('none')),
  revocation_endpoint_auth_methods_supported: z.array(z.literal('none')),
  introspection_endpoint_auth_methods_supported: z.array(z.literal('client_secret_basic')),
  authorization_response_iss_parameter_supported: z.literal(true),
  revocation_event_streams_endpoint: z.string(),
  protected_resources: z.array(z.string()).meta({
    description:
      'RFC 9728 §4: the resource identifiers (RFC 8707) of the registered, enabled resource servers that have one.',
  }),
  dpop_signing_alg_values_supported: z.array(z.string()).meta({
    description: 'RFC 9449 §5.1: the JWS algorithms a DPoP proof may be signed with.',
  }),
  pushed_authorization_request_endpoint: z.string().meta({
    description: 'RFC 9126 §5: where a client pushes its authorization request for a request_uri.',
  }),
  require_pushed_authorization_requests: z.boolean().meta({
    description:
      'RFC 9126 §5: every client must push its authorization requests (REQUIRE_PAR); a client may be required to on its own (client metadata of the same name).',
  }),
  client_id_metadata_document_supported: z.boolean().meta({
    description:
      'draft-ietf-oauth-client-id-metadata-document: whether an https client_id URL naming a metadata document is accepted.',
  }),
  registration_endpoint: z
    .string()
    .optional()
    .meta({ description: 'RFC 7591 dynamic client registration; absent when the operator turned it off.' }),
})

export const metadataOperations: Operations = {
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'metadata',
      summary: 'Authorization server metadata (RFC 8414).',
      ...open,
      responses: {
        '200': ok('The metadata.', authorizationServerMetadataSchema),
        '400': tooManyParameters,
      },
    },
  },
}
