import { z } from 'zod'
import { ALL_SCOPES } from '../lib/scopes.js'

/**
 * The request and response bodies of the JSON endpoints, as zod schemas. The OpenAPI documents
 * (document.ts) are generated from these and from the schemas the admin routes validate with, and
 * test/openapi/ checks real answers against them, so the description cannot drift from the code.
 */

const scopeString = z
  .string()
  .meta({ description: `Space-separated scopes (RFC 6749 §3.3) from: ${ALL_SCOPES.join(', ')}.` })
const isoTime = z.string().meta({ description: 'An ISO 8601 UTC timestamp, e.g. 2026-01-31T12:00:00.000Z.' })
const epochSeconds = z.number().int().meta({ description: 'Seconds since 1970-01-01T00:00:00Z.' })

// ---- OAuth endpoints -------------------------------------------------------------------------------

/** RFC 6749 §5.2 (and RFC 7009, RFC 7662) error body. */
export const oauthErrorSchema = z.object({
  error: z.enum([
    'invalid_request',
    'invalid_client',
    'invalid_grant',
    'unauthorized_client',
    'unsupported_grant_type',
    'unsupported_token_type',
    'invalid_scope',
    'server_error',
    'temporarily_unavailable',
    'invalid_stream',
  ]),
  error_description: z.string(),
})

const codeVerifier = z
  .string()
  .regex(/^[A-Za-z0-9\-._~]{43,128}$/)
  .meta({ description: 'The PKCE verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1).' })
const clientId = z.string().meta({ description: 'The client_id the operator issued.' })

export const authorizationCodeRequestSchema = z.object({
  grant_type: z
    .literal('authorization_code')
    .optional()
    .meta({ description: 'May be left out when `code` is sent.' }),
  code: z.string().max(2048).meta({ description: 'The `code` parameter of the redirect.' }),
  code_verifier: codeVerifier,
  client_id: clientId,
  redirect_uri: z.string().max(2048).optional().meta({
    description: 'Optional; when sent it must equal the redirect_uri of the authorization request.',
  }),
})

export const refreshTokenRequestSchema = z.object({
  grant_type: z.literal('refresh_token'),
  refresh_token: z.string().max(2048),
  client_id: clientId,
  scope: scopeString
    .optional()
    .meta({ description: 'Optional; a subset of the scopes of the original grant. Default: all of them.' }),
})

export const tokenRequestSchema = z.union([authorizationCodeRequestSchema, refreshTokenRequestSchema])

/** RFC 6749 §5.1. */
export const tokenResponseSchema = z.object({
  access_token: z
    .string()
    .meta({ description: 'A signed JWT (RFC 9068). Send it as `Authorization: Bearer`.' }),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().meta({ description: 'Seconds until the access token expires.' }),
  refresh_token: z
    .string()
    .meta({ description: '43 characters of base64url. Single use: every refresh returns a new one.' }),
  scope: scopeString,
})

export const revocationRequestSchema = z.object({
  token: z.string().meta({ description: 'The access or refresh token to revoke.' }),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: clientId,
})

export const introspectionRequestSchema = z.object({
  token: z.string(),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
})

export const activeTokenSchema = z.object({
  active: z.literal(true),
  scope: scopeString,
  client_id: z.string(),
  sub: z.string().meta({ description: 'The user id.' }),
  exp: epochSeconds,
  iat: epochSeconds,
  iss: z.string(),
  aud: z.string().optional().meta({ description: 'Present for access tokens only.' }),
  jti: z.string().optional().meta({ description: 'Present for access tokens only.' }),
  token_type: z.enum(['Bearer', 'refresh_token']).meta({
    description: '"Bearer" for an access token (RFC 6749 §7.1), "refresh_token" for a refresh token.',
  }),
})

export const inactiveTokenSchema = z.object({ active: z.literal(false) })

export const introspectionResponseSchema = z.union([activeTokenSchema, inactiveTokenSchema])

// ---- Revocation event feed (RFC 8417 SETs, RFC 8936 polling) ------------------------------------

export const createdEventStreamSchema = z.object({
  stream_id: z.string().meta({ description: 'Opaque; one stream per verifier instance.' }),
  poll_endpoint: z.string().meta({ description: 'Where this stream is polled.' }),
  max_wait_seconds: z
    .number()
    .int()
    .meta({ description: 'How long a poll is held when nothing is pending.' }),
})

export const pollResponseSchema = z.object({
  sets: z.record(z.string(), z.string()).meta({
    description:
      'Compact SETs (typ secevent+jwt, verifiable with jwks_uri) by their jti; empty when none arrived in time.',
  }),
  moreAvailable: z.boolean().meta({ description: 'More SETs are pending than maxEvents allowed.' }),
})

/** RFC 8414, exactly the members metadata.routes.ts answers. */
export const authorizationServerMetadataSchema = z.object({
  issuer: z.string(),
  authorization_endpoint: z.string(),
  token_endpoint: z.string(),
  revocation_endpoint: z.string(),
  introspection_endpoint: z.string(),
  jwks_uri: z.string(),
  scopes_supported: z.array(z.string()),
  response_types_supported: z.array(z.literal('code')),
  response_modes_supported: z.array(z.literal('query')),
  grant_types_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.literal('S256')),
  token_endpoint_auth_methods_supported: z.array(z.literal('none')),
  revocation_endpoint_auth_methods_supported: z.array(z.literal('none')),
  introspection_endpoint_auth_methods_supported: z.array(z.literal('client_secret_basic')),
  authorization_response_iss_parameter_supported: z.literal(true),
  revocation_event_streams_endpoint: z.string(),
})

/** RFC 7517 key set: public keys only (EC P-256, OKP Ed25519 or RSA). */
export const jwksSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.enum(['EC', 'OKP', 'RSA']),
      kid: z
        .string()
        .meta({ description: 'The RFC 7638 thumbprint of the key; the `kid` of token headers.' }),
      alg: z.enum(['ES256', 'EdDSA', 'RS256']),
      use: z.literal('sig'),
      crv: z.string().optional(),
      x: z.string().optional(),
      y: z.string().optional(),
      n: z.string().optional(),
      e: z.string().optional(),
    }),
  ),
})

// ---- account area (JSON API of the main site's front end) -----------------------------------------

export const accountAppsSchema = z.object({
  apps: z.array(
    z.object({
      client_id: z.string(),
      name: z.string(),
      scopes: z.array(z.object({ scope: z.string(), description: z.string() })),
      authorized_at: isoTime,
      last_used_at: isoTime.nullable(),
    }),
  ),
  csrf_token: z.string().meta({
    description: 'Send it back as the X-CSRF-Token header of DELETE /api/account/apps/{client_id}.',
  }),
})

// ---- problem details, health ---------------------------------------------------------------------

/** RFC 9457, as ProblemError.toJSON() writes it. */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  field: z.string().optional().meta({ description: 'The request field at fault, when there is one.' }),
})

export const livenessSchema = z.object({ status: z.literal('ok') })
export const readySchema = z.object({ status: z.literal('ready') })
export const notReadySchema = z.object({
  status: z.literal('unavailable'),
  reason: z.enum(['database_unavailable', 'migrations_pending']),
})

// ---- admin API -----------------------------------------------------------------------------------

export const clientSchema = z.object({
  client_id: z.string(),
  name: z.string(),
  redirect_uris: z.array(z.string()),
  scopes: z.array(z.string()),
  created_at: isoTime,
  disabled_at: isoTime.nullable(),
})
export const clientListSchema = z.object({ clients: z.array(clientSchema) })

export const userSchema = z.object({ id: z.string(), email: z.string(), created_at: isoTime })
export const userListSchema = z.object({ users: z.array(userSchema) })

export const resourceServerSchema = z.object({ id: z.string(), name: z.string(), created_at: isoTime })
export const createdResourceServerSchema = resourceServerSchema.extend({
  secret: z.string().meta({ description: 'The introspection password. Shown only in this answer.' }),
})
export const resourceServerListSchema = z.object({ resource_servers: z.array(resourceServerSchema) })

export const signingKeySchema = z.object({
  kid: z.string(),
  alg: z.enum(['ES256', 'EdDSA', 'RS256']),
  created_at: isoTime,
  retired_at: isoTime.nullable(),
  active: z.boolean(),
  public_jwk: jwksSchema.shape.keys.element,
})
export const signingKeyListSchema = z.object({ keys: z.array(signingKeySchema) })

const rowCounts = (description: string) => z.record(z.string(), z.number().int().min(0)).meta({ description })
export const housekeepingRunSchema = z.object({
  outcome: z.enum(['completed', 'busy', 'stopped']).meta({
    description:
      'completed: nothing expired is left; busy: another instance is deleting now (it carries on); stopped: the server is stopping.',
  }),
  deleted: rowCounts('Rows deleted, by table.'),
  batches: rowCounts('Batch transactions, by step (each deletes at most HOUSEKEEPING_BATCH_SIZE rows).'),
  duration_seconds: z.number().min(0),
})
