import { z } from 'zod'
import { isoTime, noAdminToken, ok, type Operations } from '../openapi/describe.js'
import { jwksSchema } from './jwks.openapi.js'

export const signingKeySchema = z.object({
  kid: z.string(),
  alg: z.enum(['ES256', 'EdDSA', 'RS256']),
  created_at: isoTime,
  retired_at: isoTime.nullable(),
  active: z.boolean(),
  public_jwk: jwksSchema.shape.keys.element,
})
export const signingKeyListSchema = z.object({ keys: z.array(signingKeySchema) })

export const signingKeyAdminOperations: Operations = {
  '/admin/keys': {
    get: {
      operationId: 'listSigningKeys',
      summary: 'List the signing keys: the active one and those retired.',
      responses: {
        '200': ok('Every signing key, public halves only.', signingKeyListSchema),
        '401': noAdminToken,
      },
    },
  },
  '/admin/keys/rotate': {
    post: {
      operationId: 'rotateSigningKey',
      summary: 'Make a new signing key active; the old one stays published while its tokens live.',
      responses: { '201': ok('The new active key.', signingKeySchema), '401': noAdminToken },
    },
  },
}
