import { z } from 'zod'
import {
  epochSeconds,
  formAndJson,
  oauthError,
  oauthRateLimited,
  oauthTooLarge,
  oauthUnavailable,
  ok,
  type Operations,
  scopeString,
} from '../openapi/describe.js'

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
  aud: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({
      description:
        "The token's aud, which is or lists the caller's registered resource (or the default audience for a resource server registered without one); a list for a token asked for without `resource`.",
    }),
  jti: z.string().optional(),
  token_type: z.enum(['Bearer', 'DPoP']).meta({
    description:
      '"Bearer" for an access token (RFC 6749 §7.1), "DPoP" for an access token bound to a DPoP key (RFC 9449 §6.2). Only access tokens are ever active here.',
  }),
  cnf: z
    .object({
      jkt: z.string().meta({ description: 'The RFC 7638 SHA-256 thumbprint of the key, base64url.' }),
    })
    .optional()
    .meta({
      description:
        'RFC 9449 §6.2: present for a DPoP-bound access token. The caller must then require a DPoP proof made with this key (`Authorization: DPoP`), never accept the token as Bearer.',
    }),
  client_standing: z.enum(['verified', 'vouched', 'unverified']).optional().meta({
    description:
      "linkauth's member: the standing of the app the token was issued to, as the token carries it (its `client_standing` claim). `verified`: registered or verified by the operator; `vouched`: a Client ID Metadata Document, vouched for by its host; `unverified`: registered by itself. Absent for a token signed before the claim existed; treat that as `unverified`.",
  }),
})

export const inactiveTokenSchema = z.object({ active: z.literal(false) })

export const introspectionResponseSchema = z.union([activeTokenSchema, inactiveTokenSchema])

export const introspectOperations: Operations = {
  '/api/oauth/introspect': {
    post: {
      operationId: 'introspect',
      summary: 'Introspection (RFC 7662) for registered resource servers.',
      security: [{ resourceServer: [] }],
      requestBody: formAndJson(introspectionRequestSchema),
      responses: {
        '200': ok(
          '`{"active": false}` for any token that is not live, for an access token meant for another API (RFC 7662 §4, RFC 8707), and for every refresh token, live or not: refresh tokens are for the authorization server alone.',
          introspectionResponseSchema,
        ),
        '400': oauthError('invalid_request: no token.'),
        '401': oauthError(
          'invalid_client: missing or wrong resource-server credentials (WWW-Authenticate: Basic).',
        ),
        '413': oauthTooLarge,
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
