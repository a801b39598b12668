import { createServer, type Server } from 'node:http'
import { errors, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwksCache, type JwksCache } from '../../packages/resource/src/jwks-cache.js'
import { readRevocationEvent } from '../../packages/resource/src/security-event.js'

/**
 * The toolkit's side of an emergency key removal: a key-revoked SET names a kid; the JWKS cache
 * drops it at once and keeps it out even when a (cached, stale) key set still lists it.
 */

describe('a revoked signing key in @linkauth/resource', () => {
  let server: Server
  let jwks: JwksCache
  let served = 0
  let signer: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']

  beforeAll(async () => {
    const one = await generateKeyPair('ES256')
    const two = await generateKeyPair('ES256')
    signer = two.privateKey
    const keys: JWK[] = [
      { ...(await exportJWK(one.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' },
      { ...(await exportJWK(two.publicKey)), kid: 'k2', alg: 'ES256', use: 'sig' },
    ]
    // A stale key set: it goes on listing k1 after its revocation (an HTTP cache, a lagging instance).
    server = createServer((_req, res) => {
      served++
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    jwks = createJwksCache(new URL(`http://127.0.0.1:${port}/jwks`), { fetch, refetchFloorMs: 60_000 })
    await jwks.load()
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const keyFor = (kid: string) => jwks.getKey({ alg: 'ES256', kid }, { payload: '', signature: '' } as never)

  it('reads a key-revoked SET as a kid with its until', async () => {
    const jws = await new SignJWT({
      iss: 'https://auth.example',
      aud: 'rs_1',
      jti: 'e1',
      events: { 'urn:linkauth:event:key-revoked': { kid: 'k1', until: 2000000000 } },
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k2', typ: 'secevent+jwt' })
      .setIssuedAt()
      .sign(signer)
    expect(
      await readRevocationEvent('e1', jws, { issuer: 'https://auth.example', audience: 'rs_1', jwks }),
    ).toEqual({
      kind: 'kid',
      id: 'k1',
      until: 2000000000,
    })
  })

  it('drops the kid at once, fetches the set again, and keeps the kid out of it until `until`', async () => {
    await expect(keyFor('k1')).resolves.toBeDefined()
    const generation = jwks.generation
    const fetchesBefore = served
    await jwks.revokeKey('k1', Math.floor(Date.now() / 1000) + 600)
    expect(served).toBe(fetchesBefore + 1)
    expect(jwks.generation).toBeGreaterThan(generation)
    await expect(keyFor('k1')).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey)
    await expect(keyFor('k2')).resolves.toBeDefined()
    // A later fetch of the same stale set does not bring it back.
    await jwks.load()
    await expect(keyFor('k1')).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey)
  })

  it('forgets a revocation whose until has passed (its tokens are dead anyway)', async () => {
    await jwks.revokeKey('k2', Math.floor(Date.now() / 1000) - 1)
    await expect(keyFor('k2')).resolves.toBeDefined()
  })
})
