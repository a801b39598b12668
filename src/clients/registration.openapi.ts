import { z } from 'zod'
import { jsonBody, oauthError, oauthRateLimited, ok, open, type Operations } from '../openapi/describe.js'

const registrationRequestSchema = z
  .object({
    redirect_uris: z.array(z.string()).optional().meta({
      description:
        'https, loopback http, or a private-use scheme (RFC 8252). Required with the authorization_code grant (the default); a device-only client (grant_types without it) may leave it out.',
    }),
    client_name: z.string().optional(),
    client_uri: z.string().optional(),
    policy_uri: z.string().optional(),
    tos_uri: z.string().optional(),
    logo_uri: z.string().optional(),
    scope: z.string().optional(),
    token_endpoint_auth_method: z.literal('none').optional(),
    grant_types: z
      .array(z.enum(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']))
      .optional()
      .meta({ description: 'The device grant (RFC 8628) only when named here.' }),
    response_types: z.array(z.literal('code')).optional(),
    require_pushed_authorization_requests: z.boolean().optional().meta({
      description:
        'RFC 9126 §6: true, and this client’s authorization requests must be pushed (POST /api/oauth/par).',
    }),
  })
  .meta({ description: 'RFC 7591 §2 client metadata: public clients only (no client_secret).' })

const registrationSchema = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number().int(),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  scope: z.string(),
  token_endpoint_auth_method: z.literal('none'),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  client_uri: z.string().optional(),
  policy_uri: z.string().optional(),
  tos_uri: z.string().optional(),
  require_pushed_authorization_requests: z.literal(true).optional(),
  registration_client_uri: z.string(),
  registration_access_token: z
    .string()
    .optional()
    .meta({ description: 'RFC 7592: shown once, at registration; Bearer for read and delete.' }),
})

const clientIdParameter = {
  name: 'client_id',
  in: 'path' as const,
  required: true,
  description: 'The registered client_id.',
  schema: { type: 'string' as const },
}
const wrongToken = oauthError(
  'No registration has this client_id and registration access token (invalid_token).',
)

export const registrationOperations: Operations = {
  '/api/oauth/register': {
    post: {
      operationId: 'registerClient',
      summary:
        'Dynamic client registration (RFC 7591); Bearer: the initial access token when the operator requires one.',
      ...open,
      requestBody: jsonBody(registrationRequestSchema),
      responses: {
        '201': ok('The registration, with its registration access token.', registrationSchema),
        '400': oauthError('invalid_redirect_uri or invalid_client_metadata (RFC 7591 §3.2.2).'),
        '401': oauthError('The initial access token is missing or wrong.'),
        '429': oauthRateLimited,
        '503': oauthError('Too many registrations wait for their first use (temporarily_unavailable).'),
      },
    },
  },
  '/api/oauth/register/{client_id}': {
    get: {
      operationId: 'readClientRegistration',
      summary: 'Read a registration (RFC 7592); Bearer: its registration access token.',
      ...open,
      parameters: [clientIdParameter],
      responses: { '200': ok('The registration.', registrationSchema), '401': wrongToken },
    },
    delete: {
      operationId: 'deleteClientRegistration',
      summary:
        'Delete a registration and every grant of it (RFC 7592); Bearer: its registration access token.',
      ...open,
      parameters: [clientIdParameter],
      responses: { '204': { description: 'Deleted.' }, '401': wrongToken },
    },
  },
}
