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

/** RFC 8628 §3.4: the device's poll of the token endpoint. */
export const deviceCodeRequestSchema = z.object({
  grant_type: z.literal('urn:ietf:params:oauth:grant-type:device_code'),
  device_code: z
    .string()
    .max(512)
    .meta({ description: 'The device_code of the device authorization response.' }),
  client_id: clientIdField,
  resource: z
    .string()
    .max(2048)
    .optional()
    .meta({ description: 'RFC 8707: the one API this access token is for.' }),
})

const deviceAuthorizationRequestSchema = z.object({
  client_id: clientIdField,
  scope: scopeString
    .optional()
    .meta({ description: 'Space-separated scopes; left out: every scope the client is registered with.' }),
  resource: z.string().max(2048).optional().meta({
    description:
      'RFC 8707: the API the tokens are for (one); a registered, enabled resource server serving a requested scope.',
  }),
})

const deviceAuthorizationResponseSchema = z.object({
  device_code: z
    .string()
    .meta({ description: '43 characters of base64url: the device polls the token endpoint with it.' }),
  user_code: z.string().meta({
    description:
      'RFC 8628 §6.1: 8 of the consonants BCDFGHJKLMNPQRSTVWXZ as XXXX-XXXX; typed case- and hyphen-insensitively.',
  }),
  verification_uri: z
    .string()
    .meta({ description: 'The issuer’s /device page, where the person types the code.' }),
  verification_uri_complete: z
    .string()
    .meta({ description: 'The same page with the code filled in (?user_code=).' }),
  expires_in: z
    .number()
    .int()
    .meta({ description: 'Seconds both codes live (DEVICE_CODE_TTL, 600 by default).' }),
  interval: z.number().int().meta({
    description: 'Seconds to wait between polls (DEVICE_CODE_INTERVAL, 5 by default); slow_down adds 5.',
  }),
})

export const deviceAuthorizationOperations: Operations = {
  '/api/oauth/device_authorization': {
    post: {
      operationId: 'deviceAuthorization',
      summary:
        'Device authorization endpoint (RFC 8628 §3.1): a device (a CLI, an agent on another machine) gets a ' +
        'device code to poll with and a user code the person types at verification_uri. Public clients ' +
        'whose grant types include urn:ietf:params:oauth:grant-type:device_code.',
      ...open,
      requestBody: formAndJson(deviceAuthorizationRequestSchema),
      responses: {
        '200': ok('The codes (Cache-Control: no-store).', deviceAuthorizationResponseSchema),
        '400': oauthError(
          'invalid_request, invalid_scope, invalid_target (RFC 8707), or unauthorized_client (the client may not use the device grant).',
        ),
        '401': oauthError('invalid_client: unknown or disabled client_id, or a secret sent.'),
        '413': oauthTooLarge,
        '415': oauthError('invalid_request: neither form-encoded nor JSON.'),
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
