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
} from '../openapi/describe.js'

export const revocationRequestSchema = z.object({
  token: z.string().meta({ description: 'The access or refresh token to revoke.' }),
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: clientIdField,
})

export const revokeOperations: Operations = {
  '/api/oauth/revoke': {
    post: {
      operationId: 'revoke',
      summary: 'Revocation (RFC 7009): revokes the token and the refresh-token family it belongs to.',
      ...open,
      requestBody: formAndJson(revocationRequestSchema),
      responses: {
        '200': {
          description:
            'Done, or the token was unknown, expired or not this client’s: always `{}` (RFC 7009 §2.2: ignore it).',
          content: { 'application/json': { schema: jsonSchema(z.object({}).strict()) } },
        },
        '400': oauthError(
          'invalid_request: no token or no client_id; a Basic id and a body client_id that differ; ' +
            'a browser origin not registered for the client.',
        ),
        '401': oauthError(
          'invalid_client: unknown or disabled client_id, or a secret sent (HTTP Basic password, client_secret).',
        ),
        '413': oauthTooLarge,
        '429': oauthRateLimited,
        '503': oauthUnavailable,
      },
    },
  },
}
