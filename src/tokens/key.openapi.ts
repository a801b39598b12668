import { z } from 'zod'
import {
  badInput,
  isoTime,
  noAdminToken,
  ok,
  type Operations,
  problem,
  pathParameter,
} from '../openapi/describe.js'
import { jwksSchema } from './jwks.openapi.js'

export const signingKeySchema = z.object({
  kid: z.string(),
  alg: z.enum(['ES256', 'EdDSA', 'RS256']),
  state: z.enum(['active', 'next', 'retired', 'revoked']).meta({
    description:
      'active: signs now. next: made by the rotation schedule, published, signs from activates_at. retired: signs no more, published while its tokens may live. revoked: removed in an emergency.',
  }),
  created_at: isoTime,
  activates_at: isoTime.meta({ description: 'When the key signs (next) or started signing.' }),
  retired_at: isoTime.nullable(),
  revoked_at: isoTime.nullable(),
  active: z.boolean(),
  kek_id: z.string().nullable().meta({
    description:
      'Id of the key-encryption key its private half is under (never the key); null before it was recorded.',
  }),
  public_jwk: jwksSchema.shape.keys.element,
})
export const signingKeyListSchema = z.object({ keys: z.array(signingKeySchema) })

export const keyRevocationSchema = z.object({
  revoked: signingKeySchema,
  replacement: signingKeySchema
    .nullable()
    .meta({ description: 'The key that signs from now on, when the revoked key was the active one.' }),
  already_revoked: z
    .boolean()
    .meta({ description: 'True when the key had been revoked before: nothing changed.' }),
})

export const rekeySchema = z.object({
  kek_id: z.string().meta({ description: 'Id of the key-encryption key every private key is now under.' }),
  generated: z.boolean().meta({
    description: 'True when the server made the new key-encryption key itself (embedded mode, DATA_DIR).',
  }),
  rekeyed: z.number().int(),
  already_current: z.number().int(),
  unreadable: z.array(z.string()).meta({
    description:
      'Kids that neither KEY_ENCRYPTION_KEY nor KEY_ENCRYPTION_KEY_PREVIOUS opens; left as they are.',
  }),
  complete: z
    .boolean()
    .meta({ description: 'Every private key is under the current key: KEY_ENCRYPTION_KEY_PREVIOUS can go.' }),
})

const kidParameter = pathParameter('kid', 'The key id, as GET /admin/keys lists it.')

export const signingKeyAdminOperations: Operations = {
  '/admin/keys': {
    get: {
      operationId: 'listSigningKeys',
      summary: 'List the signing keys: active, next (scheduled), retired and revoked.',
      responses: {
        '200': ok('Every signing key, public halves only.', signingKeyListSchema),
        '401': noAdminToken,
      },
    },
  },
  '/admin/keys/rotate': {
    post: {
      operationId: 'rotateSigningKey',
      summary:
        'Make a new signing key active now; the old one stays published while its tokens live, a scheduled next key is dropped.',
      responses: { '201': ok('The new active key.', signingKeySchema), '401': noAdminToken },
    },
  },
  '/admin/keys/{kid}/revoke': {
    post: {
      operationId: 'revokeSigningKey',
      summary:
        'Remove a leaked signing key: out of the JWKS and refused by introspection at once, announced on the revocation feed. The active key is replaced first.',
      parameters: [kidParameter],
      responses: {
        '200': ok('The revoked key and, if it was active, its replacement.', keyRevocationSchema),
        '400': badInput,
        '401': noAdminToken,
        '404': problem('No signing key with this kid.'),
        '409': problem('The key is the active one and no new key can be made to replace it.'),
      },
    },
  },
  '/admin/keys/rekey': {
    post: {
      operationId: 'rekeySigningKeys',
      summary:
        'Re-encrypt every private key under KEY_ENCRYPTION_KEY (KEY_ENCRYPTION_KEY_PREVIOUS opens the old ones); in embedded mode a new key-encryption key is made first.',
      responses: {
        '200': ok('What was re-encrypted.', rekeySchema),
        '401': noAdminToken,
        '503': problem('The database is unreachable; run it again (it carries on where it stopped).'),
      },
    },
  },
}
