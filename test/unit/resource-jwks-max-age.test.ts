import { createServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ResourceAuthError, VerifierUnavailableError } from '../../packages/resource/src/errors.js'
import { createJwksCache, JWKS_MAX_AGE_MS } from '../../packages/resource/src/jwks-cache.js'
import { createJwksTokenVerifier } from '../../packages/resource/src/jwks-token-verifier.js'

/**
 * The toolkit's side of a retired key (issue 31): once the authorization server has taken a kid out
 * of its JWKS, @linkauth/resource refuses its tokens within JWKS_MAX_AGE_MS, a token it remembered as
 * verified too; a set that old is fetched again before any token is checked against it.
 */
const ISSUER = 'https://auth.example'
const RESOURCE = 'https://api.example'

describe('a key that left the JWKS, in @linkauth/resource', () => {
  let server: Server
  let served: JWK[] = []
  let fail = false
  let now = 0
  let retired: Awaited<ReturnType<typeof generateKeyPair>>
  let current: Awaited<ReturnType<typeof generateKeyPair>>
  let retiredJwk: JWK
  let currentJwk: JWK
  let url: URL

  beforeAll(async () => {
    retired = await generateKeyPair('ES256')
    current = await generateKeyPair('ES256')
    retiredJwk = { ...(await exportJWK(retired.publicKey)), kid: 'old', alg: 'ES256', use: 'sig' }
    currentJwk = { ...(await exportJWK(current.publicKey)), kid: 'new', alg: 'ES256', use: 'sig' }
    server = createServer((_req, res) => {
      if (fail) res.statusCode = 500
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: served }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/jwks`)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const token = (key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'], kid: string) =>
    new SignJWT({
      client_id: 'c',
      scope: 'links:read',
      grant_id: crypto.randomUUID(),
      family_id: crypto.randomUUID(),
      jti: crypto.randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setAudience(RESOURCE)
      .setSubject('u')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key)

  function verifier() {
    const jwks = createJwksCache(url, { fetch, refetchFloorMs: 60_000, now: () => now })
    return createJwksTokenVerifier({
      issuer: ISSUER,
      resource: RESOURCE,
      jwks,
      clockToleranceSeconds: 5,
      now: () => new Date(),
    })
  }

  it('a remembered token of the key is refused once the set is older than the maximum age', async () => {
    served = [retiredJwk, currentJwk]
    fail = false
    now = 0
    const v = verifier()
    const old = await token(retired.privateKey, 'old')
    const fresh = await token(current.privateKey, 'new')
    await expect(v.verify(old)).resolves.toMatchObject({ sub: 'u' })
    // The authorization server retires the key: its kid leaves the JWKS.
    served = [currentJwk]
    now = JWKS_MAX_AGE_MS + 1
    const refused = await v.verify(old).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(ResourceAuthError)
    expect((refused as ResourceAuthError).code).toBe('unknown_key')
    await expect(v.verify(fresh)).resolves.toMatchObject({ sub: 'u' })
  })

  it('a set past the maximum age that cannot be fetched again answers unavailable, never the old keys', async () => {
    served = [retiredJwk, currentJwk]
    fail = false
    now = 0
    const v = verifier()
    const old = await token(retired.privateKey, 'old')
    await expect(v.verify(old)).resolves.toBeDefined()
    fail = true
    now = JWKS_MAX_AGE_MS + 1
    const err = await v.verify(old).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(VerifierUnavailableError)
  })
})
