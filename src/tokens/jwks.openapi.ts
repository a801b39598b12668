import { z } from 'zod'
import { ok, open, type Operations, problem, tooManyParameters } from '../openapi/describe.js'

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

export const jwksOperations: Operations = {
  '/.well-known/jwks.json': {
    get: {
      operationId: 'jwks',
      summary: 'The public keys that sign access tokens (the active key and recently retired ones).',
      ...open,
      responses: {
        '200': ok(
          'A JWK set; cache it for at most 60 s. Its `ETag` makes a conditional request possible.',
          jwksSchema,
          'application/jwk-set+json',
        ),
        '304': { description: 'Not modified: `If-None-Match` names the current `ETag`.' },
        '400': tooManyParameters,
        '503': problem('The signing keys are not loaded yet (the database was unreachable since start).'),
      },
    },
  },
}
