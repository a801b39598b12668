import { createHmac, randomUUID } from 'node:crypto'
import {
  clientStandingOf,
  createResourceVerifier,
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  type ResourceVerifier,
} from '@linkauth/resource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders } from '../helpers/app.js'
import { createParty, jwtClaims, type Party } from '../helpers/fixtures.js'
import { registerApi } from '../helpers/resource-apis.js'
import {
  accessToken,
  captureLogger,
  jwksOnlyVerifier,
  nowSeconds,
  requestsServed,
  resignedToken,
  startAuthServer,
  waitFor,
  type ListeningAuthServer,
} from '../helpers/resource.js'

/** Local verification (RFC 9068) against a live authorization server: keys from its JWKS, no feed. */

let server: ListeningAuthServer
let verifier: ResourceVerifier
let party: Party
let token: string

beforeAll(async () => {
  server = await startAuthServer()
  verifier = await jwksOnlyVerifier(server)
  party = await createParty(server.t, { grantScopes: ['links:read'] })
  token = await accessToken(server.t, party)
})
afterAll(async () => {
  await verifier.close()
  await server.close()
})

const AUD = () => server.t.config.accessTokenAudience
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

async function rejection(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!err) throw new Error('expected a rejection')
  return err as InvalidTokenError
}

describe('a valid token', () => {
  it('passes with its claims, the scopes split', async () => {
    const claims = await verifier.verify(token, ['links:read'])
    expect(claims).toMatchObject({
      iss: server.issuer,
      sub: party.userId,
      aud: server.t.config.accessTokenAudience,
      client_id: party.client.id,
      scope: 'links:read',
      scopes: ['links:read'],
      grant_id: party.grant.id,
      jti: jwtClaims(token).jti,
    })
    expect(verifier.status()).toMatchObject({ mode: 'local', feedConnected: false, revokedIds: 0 })
  })

  it('passes from an Authorization header; the scheme is case-insensitive', async () => {
    await expect(verifier.verifyAuthorization(`Bearer ${token}`)).resolves.toMatchObject({
      sub: party.userId,
    })
    await expect(verifier.verifyAuthorization(`bearer ${token}`, [])).resolves.toMatchObject({
      sub: party.userId,
    })
  })

  it('with typ application/at+jwt too (RFC 9068 §2.1)', async () => {
    const t2 = resignedToken(server.t, token, {}, { typ: 'application/at+jwt' })
    await expect(verifier.verify(t2)).resolves.toMatchObject({ sub: party.userId })
  })
})

describe("the app's standing (client_standing, issue 37)", () => {
  it('is exposed as the token carries it, and read as unverified when absent or unknown', async () => {
    const claims = await verifier.verify(token)
    expect(claims.client_standing).toBe('verified')
    expect(clientStandingOf(claims)).toBe('verified')
    const vouched = await verifier.verify(resignedToken(server.t, token, { client_standing: 'vouched' }))
    expect(clientStandingOf(vouched)).toBe('vouched')
    // A token signed before the claim existed, or with a standing this toolkit does not know: the
    // token is still valid, and an API acting on the standing takes the cautious reading.
    for (const client_standing of [undefined, 'trusted', 7]) {
      const older = await verifier.verify(resignedToken(server.t, token, { client_standing }))
      expect(older.client_standing).toBeUndefined()
      expect(clientStandingOf(older)).toBe('unverified')
    }
  })
})

describe('refusals', () => {
  it('a scope the token lacks: 403 insufficient_scope naming every required scope', async () => {
    const err = await rejection(verifier.verify(token, ['links:read', 'links:write']))
    expect(err).toBeInstanceOf(InsufficientScopeError)
    expect(err).toMatchObject({ code: 'insufficient_scope', status: 403 })
    expect(err.wwwAuthenticate).toBe(
      'Bearer error="insufficient_scope", error_description="The access token does not grant every scope this request needs.", scope="links:read links:write"',
    )
  })

  it.each([
    ['expired beyond the leeway', { exp: nowSeconds() - 10 }, 'token_expired'],
    ['issued in the future beyond the leeway', { iat: nowSeconds() + 60 }, 'token_not_yet_valid'],
    ['not valid before a future nbf', { nbf: nowSeconds() + 60 }, 'token_not_yet_valid'],
    ['for another audience', { aud: 'https://other.example/api' }, 'wrong_audience'],
    ['for no API (an empty audience list)', { aud: [] }, 'wrong_audience'],
    ['from another issuer', { iss: 'https://evil.example' }, 'wrong_issuer'],
    ['without grant_id', { grant_id: undefined }, 'invalid_claims'],
    ['without jti', { jti: undefined }, 'invalid_claims'],
    ['with a scope that is not a string', { scope: ['links:read'] }, 'invalid_claims'],
    ['with an exp that is not a number', { exp: 'tomorrow' }, 'invalid_claims'],
  ])('a token %s: 401 %s', async (_name, claims, code) => {
    const err = await rejection(verifier.verify(resignedToken(server.t, token, claims)))
    expect(err).toBeInstanceOf(InvalidTokenError)
    expect(err).toMatchObject({ code, status: 401 })
    expect(err.wwwAuthenticate).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"$/)
  })

  it('a token for this API and others (aud a list, RFC 9068 §4): accepted; with soleAudience, 401 wrong_audience', async () => {
    const both = resignedToken(server.t, token, { aud: [AUD(), 'https://other.example/api'] })
    await expect(verifier.verify(both)).resolves.toMatchObject({ aud: [AUD(), 'https://other.example/api'] })
    const sole = await jwksOnlyVerifier(server, { soleAudience: true })
    try {
      const err = await rejection(sole.verify(both))
      expect(err).toMatchObject({ code: 'wrong_audience', status: 401 })
      expect(err.description).toBe('The access token is not meant for this API alone.')
      // A list of exactly this API is this API alone, as is the plain string.
      await expect(sole.verify(resignedToken(server.t, token, { aud: [AUD()] }))).resolves.toBeDefined()
      await expect(sole.verify(token)).resolves.toBeDefined()
    } finally {
      await sole.close()
    }
  })

  it('exp and iat inside the leeway (5 s) pass', async () => {
    const claims = { exp: nowSeconds() - 2, iat: nowSeconds() + 2 }
    await expect(verifier.verify(resignedToken(server.t, token, claims))).resolves.toBeDefined()
  })

  it.each([
    ['JWT', 'wrong_type'],
    ['secevent+jwt', 'wrong_type'],
    [undefined, 'wrong_type'],
  ])('typ %s: 401 %s', async (typ, code) => {
    const err = await rejection(verifier.verify(resignedToken(server.t, token, {}, typ ? { typ } : {})))
    expect(err).toMatchObject({ code, status: 401 })
  })

  it('a tampered signature or payload: bad_signature', async () => {
    const [h, p, s] = token.split('.') as [string, string, string]
    const flipped = `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`
    expect(await rejection(verifier.verify(`${h}.${p}.${flipped}`))).toMatchObject({ code: 'bad_signature' })
    const widened = b64({ ...jwtClaims(token), scope: 'links:read links:write' })
    expect(await rejection(verifier.verify(`${h}.${widened}.${s}`))).toMatchObject({ code: 'bad_signature' })
  })

  it('alg none and HS256 (with the public key as secret) are never accepted', async () => {
    const { kid } = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())
    const payload = b64(jwtClaims(token))
    const none = `${b64({ alg: 'none', typ: 'at+jwt', kid })}.${payload}.`
    expect(await rejection(verifier.verify(none))).toMatchObject({ code: 'unsupported_alg', status: 401 })
    const jwks = (await (await fetch(`${server.issuer}/.well-known/jwks.json`)).json()) as { keys: unknown[] }
    const input = `${b64({ alg: 'HS256', typ: 'at+jwt', kid })}.${payload}`
    const mac = createHmac('sha256', JSON.stringify(jwks.keys[0])).update(input).digest('base64url')
    expect(await rejection(verifier.verify(`${input}.${mac}`))).toMatchObject({ code: 'unsupported_alg' })
  })

  it.each(['', 'abc', 'a.b.c', 'x'.repeat(9000)])('garbage %#: malformed_token', async (garbage) => {
    expect(await rejection(verifier.verify(garbage))).toMatchObject({ code: 'malformed_token', status: 401 })
  })

  it('no header, or another scheme: 401 with a bare challenge (RFC 6750 §3.1)', async () => {
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz']) {
      const err = await rejection(verifier.verifyAuthorization(header))
      expect(err).toBeInstanceOf(InvalidTokenError)
      expect(err).toMatchObject({ code: 'missing_token', status: 401, wwwAuthenticate: 'Bearer' })
      expect(err.challenge('links')).toBe('Bearer realm="links"')
    }
  })

  it('a malformed Bearer header: 400 invalid_request, the token never echoed', async () => {
    for (const header of [
      'Bearer',
      'Bearer ',
      `Bearer ${token} extra`,
      `Bearer  ${token}"`,
      `Bearer\t${token}`,
    ]) {
      const err = await rejection(verifier.verifyAuthorization(header))
      expect(err).toBeInstanceOf(InvalidRequestError)
      expect(err).toMatchObject({ code: 'malformed_authorization', status: 400 })
      expect(err.wwwAuthenticate).toMatch(/^Bearer error="invalid_request", error_description="[^"]+"$/)
      expect(err.message).not.toContain(token)
    }
  })
})

describe('key rotation', () => {
  it('old and new tokens verify; an unknown kid refetches the JWKS at most once per floor', async () => {
    const floorSeconds = 2
    const servedBefore = await requestsServed(server.t, '/.well-known/jwks.json')
    const rotating = await jwksOnlyVerifier(server, { jwksRefetchFloorSeconds: floorSeconds })
    try {
      const created = Date.now()
      expect(rotating.stats().jwksFetches).toBe(1)
      const oldToken = await accessToken(server.t, party)
      await rotating.verify(oldToken)

      const rotated = await server.t.admin.inject({
        method: 'POST',
        url: '/admin/keys/rotate',
        headers: adminHeaders,
      })
      expect(rotated.statusCode).toBe(201)
      const newToken = await accessToken(server.t, party)
      expect(JSON.parse(Buffer.from(newToken.split('.')[0]!, 'base64url').toString()).kid).toBe(
        rotated.json().kid,
      )

      // Inside the floor since the first fetch: made-up kids and the new one alike cause no fetch.
      const madeUp = Array.from({ length: 20 }, () =>
        resignedToken(server.t, oldToken, {}, { typ: 'at+jwt', kid: randomUUID() }),
      )
      const results = await Promise.allSettled([newToken, ...madeUp].map((tk) => rotating.verify(tk)))
      if (Date.now() - created < floorSeconds * 1000) {
        expect(results.every((r) => r.status === 'rejected')).toBe(true)
        expect(rotating.stats().jwksFetches).toBe(1)
      }

      // After the floor the new kid is fetched once; old tokens still verify without another fetch.
      await waitFor(
        () =>
          rotating.verify(newToken).then(
            () => true,
            () => false,
          ),
        { what: 'the new key' },
      )
      const fetches = rotating.stats().jwksFetches
      expect(fetches).toBeGreaterThanOrEqual(2)
      await rotating.verify(oldToken)
      await Promise.allSettled(madeUp.map((tk) => rotating.verify(tk)))
      await Promise.allSettled(madeUp.map((tk) => rotating.verify(tk)))
      expect(rotating.stats().jwksFetches).toBeLessThanOrEqual(fetches + 1)
      const elapsed = (Date.now() - created) / 1000
      // Never more than one fetch at creation plus one per floor interval.
      expect(rotating.stats().jwksFetches).toBeLessThanOrEqual(1 + Math.ceil(elapsed / floorSeconds))
      // The server counts an answer once it is sent, a moment after the client has it.
      const served = () => requestsServed(server.t, '/.well-known/jwks.json').then((n) => n - servedBefore)
      await waitFor(async () => (await served()) >= rotating.stats().jwksFetches, {
        what: 'the server count',
      })
      expect(await served()).toBe(rotating.stats().jwksFetches)
    } finally {
      await rotating.close()
    }
  })
})

describe('creation', () => {
  it('fails when the metadata speaks for another issuer', async () => {
    await expect(
      createResourceVerifier({
        issuer: `${server.issuer}/`,
        resource: 'https://api.example.com',
        revocationFeed: false,
      }),
    ).rejects.toThrow(/issuer/)
  })

  it.each([
    ['a relative reference', '/api'],
    ['a fragment', 'https://api.example.com/links#x'],
    ['http on a public host', 'http://api.example.com/links'],
    ['user info', 'https://user@api.example.com'],
    ['another scheme', 'urn:example:links'],
    ['more than 2048 characters', `https://api.example.com/${'a'.repeat(2030)}`],
    ['a space', 'https://api.example.com/my links'],
  ])('refuses a resource with %s, before any network call', async (_case, resource) => {
    let fetched = false
    await expect(
      createResourceVerifier({
        issuer: server.issuer,
        resource,
        revocationFeed: false,
        fetch: async (...args) => {
          fetched = true
          return fetch(...args)
        },
      }),
    ).rejects.toThrow(/^resource must be an absolute https URI/)
    expect(fetched).toBe(false)
  })

  it('takes https, http on loopback, and exactly 2048 characters', async () => {
    for (const resource of [
      'https://api.example.com',
      'https://api.example.com/links?v=1',
      'http://localhost:3002/api',
      'http://127.0.0.1:3002',
      'http://[::1]:3002/api',
      `https://api.example.com/${'a'.repeat(2048 - 'https://api.example.com/'.length)}`,
    ]) {
      const v = await createResourceVerifier({ issuer: server.issuer, resource, revocationFeed: false })
      expect(v.resource).toBe(resource)
      await v.close()
    }
  })

  it('still takes audience, the old name of resource, and says it is deprecated', async () => {
    const warnings: string[] = []
    const logger = {
      info: () => {},
      error: () => {},
      warn: (_o: object, msg?: string) => warnings.push(msg ?? ''),
    }
    const old = await createResourceVerifier({
      issuer: server.issuer,
      audience: AUD(),
      revocationFeed: false,
      logger,
    })
    try {
      expect(old.resource).toBe(AUD())
      await expect(old.verify(token)).resolves.toMatchObject({ aud: AUD() })
      expect(warnings.filter((w) => /deprecated/.test(w))).toEqual([
        expect.stringMatching(/audience is deprecated; name it resource/),
      ])
    } finally {
      await old.close()
    }
    await expect(
      createResourceVerifier({
        issuer: server.issuer,
        resource: AUD(),
        audience: 'https://other.example/api',
        revocationFeed: false,
      }),
    ).rejects.toThrow(/different APIs/)
  })

  it('warns once at start when its resource is not among the server’s protected_resources', async () => {
    const api = { name: 'Warned API', resource: 'https://warned.example/api', scopes: ['links:read'] }
    const start = async () => {
      const log = captureLogger()
      const v = await jwksOnlyVerifier(server, { resource: api.resource, logger: log.logger })
      await v.verify(resignedToken(server.t, token, { aud: api.resource })) // no second warning on use
      await v.close()
      return log.lines.filter((l) => l.level === 'warn')
    }
    const unregistered = await start()
    expect(unregistered).toHaveLength(1)
    expect(unregistered[0]!.msg).toMatch(/not among the authorization server's protected_resources/)
    expect(unregistered[0]!.o).toMatchObject({ resource: api.resource, issuer: server.issuer })
    const { id } = await registerApi(server.t, api)
    expect(await start()).toEqual([])
    // Disabled: it leaves protected_resources, and the warning is back.
    await server.t.services.resourceServers.disableResourceServer(id)
    expect(await start()).toHaveLength(1)
  })

  it('needs credentials for introspection', async () => {
    await expect(
      createResourceVerifier({
        issuer: server.issuer,
        resource: 'https://api.example.com',
        mode: 'introspection',
      }),
    ).rejects.toThrow(/credentials/)
  })
})
