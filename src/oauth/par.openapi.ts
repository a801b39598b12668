import { z } from 'zod'
import {
  clientIdField,
  formAndJson,
  jsonSchema,
  oauthError,
  oauthRateLimited,
  oauthTooLarge,
  oauthUnavailable,
  open,
  type Operations,
  scopeString,
} from '../openapi/describe.js'

/** RFC 9126 §2.1: the parameters of GET /oauth/authorize (authorize.openapi.ts), in the body. */
export const pushedAuthorizationRequestSchema = z.object({
  client_id: clientIdField,
  redirect_uri: z.string().max(2048).meta({ description: 'Exactly one of the registered redirect URIs.' }),
  scope: scopeString,
  code_challenge: z.string().meta({ description: 'BASE64URL(SHA-256(code_verifier)): 43 characters.' }),
  code_challenge_method: z.literal('S256').optional(),
  response_type: z.literal('code').optional(),
  state: z.string().max(1024).optional(),
  prompt: z.string().optional().meta({ description: '`none`, `login`, `consent`, or `login consent`.' }),
  ui_locales: z.string().max(256).optional().meta({
    description: 'OIDC ui_locales: the languages of the sign-in and consent pages, in order of preference.',
  }),
  resource: z
    .union([z.string().max(2048), z.array(z.string().max(2048))])
    .optional()
    .meta({
      description: 'RFC 8707: the API(s) the tokens are for, repeatable, as at the authorization endpoint.',
    }),
  dpop_jkt: z.string().optional().meta({
    description:
      'RFC 9449 §10: the thumbprint of the DPoP key the code is bound to. With a `DPoP` proof header it must be that key’s.',
  }),
})

/** RFC 9126 §2.2. */
export const pushedAuthorizationResponseSchema = z.object({
  request_uri: z
    .string()
    .meta({ description: '`urn:ietf:params:oauth:request_uri:` and a random handle; single use.' }),
  expires_in: z.number().int().meta({ description: 'Seconds it may be used for (PAR_TTL, 60 by default).' }),
})

export const parOperations: Operations = {
  '/api/oauth/par': {
    post: {
      operationId: 'pushAuthorizationRequest',
      summary:
        'Pushed authorization request (RFC 9126): the authorization parameters, checked as GET /oauth/authorize ' +
        'checks them, for a short-lived request_uri to send the browser with.',
      ...open,
      parameters: [
        {
          name: 'DPoP',
          in: 'header',
          required: false,
          description:
            'RFC 9449 §10.1: a DPoP proof for POST of this endpoint; the code is then bound to its key (as by `dpop_jkt`).',
          schema: { type: 'string' },
        },
      ],
      requestBody: formAndJson(pushedAuthorizationRequestSchema),
      responses: {
        '201': {
          description:
            'Pushed: send the browser to /oauth/authorize with `client_id` and this `request_uri`.',
          content: { 'application/json': { schema: jsonSchema(pushedAuthorizationResponseSchema) } },
        },
        '400': oauthError(
          'invalid_request (a missing or repeated parameter, a redirect_uri not registered for the client, ' +
            'a request_uri sent, bad PKCE), invalid_scope, invalid_target, unsupported_response_type, ' +
            'invalid_dpop_proof or use_dpop_nonce: the authorization endpoint’s checks, answered here, never redirected.',
        ),
        '401': oauthError('invalid_client: unknown, disabled or refused client_id, or a secret sent.'),
        '413': oauthTooLarge,
        '415': oauthError('invalid_request: the body is neither a form nor JSON.'),
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
