import { z } from 'zod'
import {
  clientIdField,
  formAndJson,
  oauthError,
  oauthRateLimited,
  oauthTooLarge,
  oauthUnavailable,
  ok,
  open,
  type Operations,
  scopeString,
} from '../openapi/describe.js'
import { deviceCodeRequestSchema } from './device-authorization.openapi.js'

const codeVerifier = z
  .string()
  .regex(/^[A-Za-z0-9\-._~]{43,128}$/)
  .meta({ description: 'The PKCE verifier: 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1).' })

const resourceField = z
  .string()
  .max(2048)
  .optional()
  .meta({
    description:
      'RFC 8707: the one API this access token is for (one audience per token; sent twice: invalid_target). ' +
      'It must be one the authorization request named. The token’s `aud` is then this identifier and its ' +
      '`scope` the granted scopes that API serves. Left out: the authorization’s only API; when it named ' +
      'none, every API serving a granted scope (`aud` lists the default audience and each of them, `scope` ' +
      'every granted scope; invalid_target with REQUIRE_RESOURCE); invalid_target when it named several.',
  })

export const authorizationCodeRequestSchema = z.object({
  grant_type: z
    .literal('authorization_code')
    .optional()
    .meta({ description: 'May be left out when `code` is sent.' }),
  code: z.string().max(2048).meta({ description: 'The `code` parameter of the redirect.' }),
  code_verifier: codeVerifier,
  client_id: clientIdField,
  redirect_uri: z.string().max(2048).optional().meta({
    description: 'Optional; when sent it must equal the redirect_uri of the authorization request.',
  }),
  resource: resourceField,
})

export const refreshTokenRequestSchema = z.object({
  grant_type: z.literal('refresh_token'),
  refresh_token: z.string().max(2048),
  client_id: clientIdField,
  scope: scopeString
    .optional()
    .meta({ description: 'Optional; a subset of the scopes of the original grant. Default: all of them.' }),
  resource: resourceField,
})

export const tokenRequestSchema = z.union([
  authorizationCodeRequestSchema,
  refreshTokenRequestSchema,
  deviceCodeRequestSchema,
])

/** RFC 6749 §5.1. */
export const tokenResponseSchema = z.object({
  access_token: z.string().meta({
    description:
      'A signed JWT (RFC 9068). Send it as `Authorization: Bearer`, or, when token_type is DPoP, as `Authorization: DPoP` with a DPoP proof (its `cnf.jkt` names the key).',
  }),
  token_type: z.enum(['Bearer', 'DPoP']).meta({
    description:
      '"DPoP" when the request carried a valid DPoP proof (RFC 9449 §5): the access token is bound to its key; else "Bearer".',
  }),
  expires_in: z.number().int().meta({ description: 'Seconds until the access token expires.' }),
  refresh_token: z.string().meta({
    description:
      '43 characters of base64url. Spent by its use: every refresh returns a new one. Presented again by ' +
      'the same client within REFRESH_REUSE_WINDOW (10 s by default) it answers again, at most 5 times ' +
      '(a retry); later it revokes its family.',
  }),
  scope: scopeString.meta({
    description: 'The access token’s scope: with `resource`, only the granted scopes that API serves.',
  }),
})

export const tokenOperations: Operations = {
  '/api/oauth/token': {
    post: {
      operationId: 'token',
      summary:
        'Token endpoint (RFC 6749 §3.2): exchange a code, or refresh. Public clients send client_id ' +
        '(in the body, or as the HTTP Basic user with an empty password); no secret.',
      ...open,
      parameters: [
        {
          name: 'DPoP',
          in: 'header',
          required: false,
          description:
            'A DPoP proof (RFC 9449 §4): one JWT with typ dpop+jwt, signed with a key of `dpop_signing_alg_values_supported` whose public JWK is in the `jwk` header; claims jti, htm POST, htu the token endpoint, iat, and nonce when the server asks for one. With it the access token is bound to the key (token_type DPoP) and so is the refresh token of a new authorization. Required when DPOP_REQUIRED is set or the client requires DPoP.',
          schema: { type: 'string', maxLength: 4096 },
        },
      ],
      requestBody: formAndJson(tokenRequestSchema),
      responses: {
        '200': ok(
          'Tokens. Sent with Cache-Control: no-store, and with a fresh DPoP-Nonce header when nonces are required.',
          tokenResponseSchema,
        ),
        '400': oauthError(
          'invalid_request (also: a Basic id and a body client_id that differ; a browser origin not ' +
            'registered for the client), invalid_grant (also: a code bound by dpop_jkt, or a refresh token ' +
            'bound to a DPoP key, presented without a proof made with that key), invalid_scope, invalid_target (RFC 8707: a bad, unknown, disabled or unauthorized ' +
            '`resource`, more than one, or none when the authorization named several or none under REQUIRE_RESOURCE), unauthorized_client, ' +
            'unsupported_grant_type, invalid_dpop_proof (RFC 9449: a DPoP proof that fails a check, or none where DPoP is required) or ' +
            'use_dpop_nonce (RFC 9449 §8: retry with a proof carrying the nonce of the DPoP-Nonce header); ' +
            'for the device grant (RFC 8628 §3.5) authorization_pending, slow_down (wait 5 s longer from now on), ' +
            'access_denied, expired_token, and invalid_grant for a device code used before.',
        ),
        '401': oauthError(
          'invalid_client: unknown or disabled client_id, or a secret sent (HTTP Basic password, client_secret).',
        ),
        '413': oauthTooLarge,
        '415': oauthError('invalid_request: neither form-encoded nor JSON.'),
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
