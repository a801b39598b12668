import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { parseOrProblem } from '../input/parse-or-problem.js'
import type {
  RekeyResult,
  RevocationResult,
  SigningKeyInfo,
  SigningKeyService,
} from './signing-key.service.js'

/** What a key is doing now: signing, published ahead of its use, retired (tokens may live), revoked. */
export function keyState(key: SigningKeyInfo): 'active' | 'next' | 'retired' | 'revoked' {
  if (key.revokedAt) return 'revoked'
  if (key.pending) return 'next'
  return key.retiredAt === null ? 'active' : 'retired'
}

/** Public facts only: the private half never leaves the service. */
export function signingKeyJson(key: SigningKeyInfo) {
  return {
    kid: key.kid,
    alg: key.alg,
    state: keyState(key),
    created_at: key.createdAt.toISOString(),
    activates_at: key.activatesAt.toISOString(),
    retired_at: key.retiredAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    active: keyState(key) === 'active',
    kek_id: key.kekId,
    public_jwk: { ...key.publicJwk, kid: key.kid, alg: key.alg, use: 'sig' },
  }
}

export function revocationJson(result: RevocationResult) {
  return {
    revoked: signingKeyJson(result.key),
    replacement: result.replacement ? signingKeyJson(result.replacement) : null,
    already_revoked: !result.changed,
  }
}

export function rekeyJson(result: RekeyResult) {
  return {
    kek_id: result.kekId,
    generated: result.generated,
    rekeyed: result.rekeyed,
    already_current: result.alreadyCurrent,
    unreadable: result.unreadable,
    complete: result.unreadable.length === 0,
  }
}

/** A kid is an RFC 7638 thumbprint (base64url); anything else names no key. */
export const kidParams = z.object({
  kid: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'a key id (base64url, as GET /admin/keys lists it)'),
})

/** The services it uses, handed in by the composition root (DESIGN §2). */
export interface SigningKeyAdminServices {
  signingKeys: SigningKeyService
}

/**
 * Admin API: list signing keys; rotate (the new key signs from now on, the old one stays published);
 * revoke a leaked key (gone from the JWKS and introspection at once, announced on the feed); rekey
 * (every private key re-encrypted under the current key-encryption key).
 */
export function signingKeyAdminRoutes(services: SigningKeyAdminServices) {
  return async (app: FastifyInstance) => {
    app.get('/admin/keys', async () => ({
      keys: (await services.signingKeys.listKeys()).map(signingKeyJson),
    }))
    app.post('/admin/keys/rotate', async (request, reply) => {
      const key = await services.signingKeys.rotate(request)
      return reply.code(201).send(signingKeyJson(key))
    })
    app.post('/admin/keys/rekey', async (request) => rekeyJson(await services.signingKeys.rekey(request)))
    app.post('/admin/keys/:kid/revoke', async (request) => {
      const { kid } = parseOrProblem(kidParams, request.params)
      return revocationJson(await services.signingKeys.revoke(kid, request))
    })
  }
}
