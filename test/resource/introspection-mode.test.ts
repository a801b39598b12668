import { createResourceVerifier, VerifierUnavailableError } from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createParty, type Party } from '../helpers/fixtures.js'
import {
  accessToken,
  captureLogger,
  nowSeconds,
  requestsServed,
  resignedToken,
  startAuthServer,
  waitFor,
  type ListeningAuthServer,
} from '../helpers/resource.js'
import { createResourceServer, revokeRequest, type ResourceServerCredentials } from '../helpers/tokens.js'

/** mode 'introspection': every token is verified locally, then asked about (RFC 7662), with a short cache. */

let server: ListeningAuthServer
let credentials: ResourceServerCredentials
let party: Party

beforeAll(async () => {
  server = await startAuthServer()
  credentials = await createResourceServer(server.t)
  party = await createParty(server.t)
})
afterAll(async () => server.close())

const INTROSPECT = '/api/oauth/introspect'

function introspectionVerifier(options: { introspectionCacheSeconds: number; secret?: string }) {
  const log = captureLogger()
  return createResourceVerifier({
    issuer: server.issuer,
    resource: server.t.config.accessTokenAudience,
    mode: 'introspection',
    credentials: { id: credentials.id, secret: options.secret ?? credentials.secret },
    introspectionCacheSeconds: options.introspectionCacheSeconds,
    logger: log.logger,
  }).then((verifier) => ({ verifier, log }))
}

/** Waits until the server has counted `n` more introspection answers than `before` (counted after sending). */
async function served(before: number, n: number): Promise<number> {
  await waitFor(async () => (await requestsServed(server.t, INTROSPECT)) - before >= n, {
    what: 'introspection count',
  })
  return (await requestsServed(server.t, INTROSPECT)) - before
}

describe("mode 'introspection'", () => {
  it('asks once per token while the active answer is cached; a revocation shows after the cache', async () => {
    const { verifier } = await introspectionVerifier({ introspectionCacheSeconds: 60 })
    const uncached = await introspectionVerifier({ introspectionCacheSeconds: 0 })
    try {
      expect(verifier.status().mode).toBe('introspection')
      const before = await requestsServed(server.t, INTROSPECT)
      const token = await accessToken(server.t, party)
      for (let i = 0; i < 5; i++) await verifier.verify(token, ['links:read'])
      expect(verifier.stats().introspectionCalls).toBe(1)
      await uncached.verifier.verify(token)
      await uncached.verifier.verify(token)
      expect(uncached.verifier.stats().introspectionCalls).toBe(2)
      expect(await served(before, 3)).toBe(3)

      // RFC 7009 revocation of the access token (its jti): the uncached verifier sees it on the next call.
      const revoked = await revokeRequest(server.t, { token, client_id: party.client.id })
      expect(revoked.statusCode).toBe(200)
      await expect(uncached.verifier.verify(token)).rejects.toMatchObject({
        code: 'token_inactive',
        status: 401,
      })
      // The cached answer stands until the cache runs out: the price of the cache, bounded by its setting.
      await expect(verifier.verify(token)).resolves.toMatchObject({ jti: expect.any(String) })
      expect(verifier.stats().introspectionCalls).toBe(1)
    } finally {
      await verifier.close()
      await uncached.verifier.close()
    }
  })

  it('a forged token is refused locally, without a call', async () => {
    const { verifier } = await introspectionVerifier({ introspectionCacheSeconds: 5 })
    try {
      const token = await accessToken(server.t, party)
      const forged = resignedToken(server.t, token, { aud: 'https://elsewhere.example' })
      await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'wrong_audience' })
      await expect(verifier.verify('not-a-jwt')).rejects.toMatchObject({ code: 'malformed_token' })
      expect(verifier.stats().introspectionCalls).toBe(0)
    } finally {
      await verifier.close()
    }
  })

  it("never reuses an answer past the token's exp (the local check has leeway, the server has none)", async () => {
    const { verifier } = await introspectionVerifier({ introspectionCacheSeconds: 60 })
    try {
      const exp = nowSeconds() + 2
      const shortLived = resignedToken(server.t, await accessToken(server.t, party), { exp })
      await verifier.verify(shortLived)
      expect(verifier.stats().introspectionCalls).toBe(1)
      await waitFor(() => nowSeconds() > exp, { what: 'the token to expire' })
      // Expired by a second: inside the 5 s leeway locally, so only a fresh answer can refuse it.
      await expect(verifier.verify(shortLived)).rejects.toMatchObject({ code: 'token_inactive' })
      expect(verifier.stats().introspectionCalls).toBe(2)
    } finally {
      await verifier.close()
    }
  })

  it('introspection unreachable or refusing our credentials: 503, and the operator is told', async () => {
    const { verifier, log } = await introspectionVerifier({ introspectionCacheSeconds: 0 })
    const wrong = await introspectionVerifier({ introspectionCacheSeconds: 0, secret: 'not-the-secret' })
    try {
      const token = await accessToken(server.t, party)
      const err = await wrong.verifier.verify(token).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(VerifierUnavailableError)
      expect(err).toMatchObject({ status: 503, code: 'verifier_unavailable' })
      expect(wrong.log.lines).toContainEqual(
        expect.objectContaining({
          level: 'error',
          o: { err: expect.stringContaining('401 invalid_client') },
        }),
      )

      server.proxy.cut()
      await expect(verifier.verify(token)).rejects.toBeInstanceOf(VerifierUnavailableError)
      expect(log.lines.some((l) => l.level === 'error')).toBe(true)
      server.proxy.restore()
      await expect(verifier.verify(token)).resolves.toBeDefined()
    } finally {
      server.proxy.restore()
      await verifier.close()
      await wrong.verifier.close()
    }
  })
})
