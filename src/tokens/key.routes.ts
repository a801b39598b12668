import type { FastifyInstance } from 'fastify'
import type { Services } from '../services.js'
import type { SigningKeyInfo } from './signing-key.service.js'

/** Public facts only: the private half never leaves the service. */
export function signingKeyJson(key: SigningKeyInfo) {
  return {
    kid: key.kid,
    alg: key.alg,
    created_at: key.createdAt.toISOString(),
    retired_at: key.retiredAt?.toISOString() ?? null,
    active: key.retiredAt === null,
    public_jwk: { ...key.publicJwk, kid: key.kid, alg: key.alg, use: 'sig' },
  }
}

/** Admin API: list signing keys; rotate (the new key signs from now on, the old one stays published). */
export function signingKeyAdminRoutes(services: Pick<Services, 'signingKeys'>) {
  return async (app: FastifyInstance) => {
    app.get('/admin/keys', async () => ({
      keys: (await services.signingKeys.listKeys()).map(signingKeyJson),
    }))
    app.post('/admin/keys/rotate', async (_request, reply) => {
      const key = await services.signingKeys.rotate()
      return reply.code(201).send(signingKeyJson(key))
    })
  }
}
