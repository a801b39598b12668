import { createServer, type Server } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearerToken } from '../../packages/resource/src/authorization-header.js'
import {
  InsufficientScopeError,
  InvalidRequestError,
  InvalidTokenError,
  VerifierUnavailableError,
} from '../../packages/resource/src/errors.js'
import { createJwksCache, type JwksCache } from '../../packages/resource/src/jwks-cache.js'
import { createRevocationSet } from '../../packages/resource/src/revocation-set.js'
import {
  readRevocationEvent,
  SetError,
  SetKeyUnknownError,
} from '../../packages/resource/src/security-event.js'

describe('WWW-Authenticate challenges (RFC 6750 §3)', () => {
  it('quote the realm and drop characters a quoted value may not hold', () => {
    const err = new InvalidTokenError('malformed_token', 'bad "token" \\ here\n')
    expect(err.challenge('my "api"')).toBe(
      'Bearer realm="my api", error="invalid_token", error_description="bad token  here"',
    )
  })

  it('name the required scopes on 403; stay bare on 401 without a token and on 503', () => {
    expect(new InsufficientScopeError(['links:write', 'links:read']).challenge('x')).toMatch(
      /^Bearer realm="x", error="insufficient_scope", error_description="[^"]+", scope="links:write links:read"$/,
    )
    expect(new InvalidTokenError('missing_token', 'none').wwwAuthenticate).toBe('Bearer')
    expect(new VerifierUnavailableError().challenge('x')).toBe('Bearer realm="x"')
    expect(new InvalidRequestError('malformed_authorization', 'm').toJSON()).toEqual({
      error: 'invalid_request',
      error_description: 'm',
    })
  })
})

describe('bearerToken', () => {
  it('takes b64token characters after "Bearer" and one or more spaces', () => {
    expect(bearerToken('Bearer abc.DEF-_~+/==')).toBe('abc.DEF-_~+/==')
    expect(bearerToken('BEARER   abc ')).toBe('abc')
  })

  it.each(['Bearer', 'Bearer ', 'Bearer a=b', 'Bearer a b', 'Bearer\ta', 'Bearer "a"'])(
    '%j is malformed',
    (h) => {
      expect(() => bearerToken(h)).toThrow(InvalidRequestError)
    },
  )

  it.each([undefined, '', 'Basic abc', 'Bearerabc', 'Token abc'])('%j has no bearer token', (h) => {
    expect(() => bearerToken(h)).toThrow(expect.objectContaining({ code: 'missing_token', status: 401 }))
  })
})

describe('the revocation set', () => {
  const claims = (over: Record<string, string> = {}) =>
    ({ grant_id: 'g1', family_id: 'f1', jti: 'j1', client_id: 'c1', ...over }) as never

  it('refuses a token by any of its ids until `until`, then forgets the id', () => {
    let now = 1000
    const set = createRevocationSet(() => now)
    set.add('family_id', 'f1', 1010)
    set.add('client_id', 'c2', 1005)
    set.add('jti', 'old', 999) // already over: never kept
    expect(set.size).toBe(2)
    expect(set.revokedBy(claims())).toBe('family_id')
    expect(set.revokedBy(claims({ family_id: 'f2' }))).toBeUndefined()
    expect(set.revokedBy(claims({ family_id: 'f2', client_id: 'c2' }))).toBe('client_id')
    now = 1005
    expect(set.size).toBe(1)
    now = 1010
    expect(set.revokedBy(claims())).toBeUndefined()
    expect(set.size).toBe(0)
  })

  it('keeps the later until when an id comes twice (at-least-once delivery)', () => {
    let now = 0
    const set = createRevocationSet(() => now)
    set.add('grant_id', 'g1', 50)
    set.add('grant_id', 'g1', 20)
    now = 30
    expect(set.revokedBy(claims())).toBe('grant_id')
  })
})

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey']

describe('reading a Security Event Token', () => {
  const ISSUER = 'https://auth.example'
  const AUDIENCE = 'rs_123'
  let server: Server
  let jwks: JwksCache
  let key: PrivateKey
  let otherKey: PrivateKey

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256')
    key = pair.privateKey
    otherKey = (await generateKeyPair('ES256')).privateKey
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
    server = createServer((_req, res) =>
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [jwk] })),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    jwks = createJwksCache(new URL(`http://127.0.0.1:${port}/jwks`), { fetch, refetchFloorMs: 60_000 })
    await jwks.load()
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const grantRevoked = { 'urn:linkauth:event:grant-revoked': { grant_id: 'g1', until: 2000000000 } }

  function set(
    claims: Record<string, unknown> = {},
    header: Record<string, unknown> = {},
    signingKey: PrivateKey = key,
  ) {
    return new SignJWT({ iss: ISSUER, aud: AUDIENCE, jti: 'e1', events: grantRevoked, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'secevent+jwt', ...header })
      .setIssuedAt()
      .sign(signingKey)
  }
  const read = async (jws: unknown, deliveredAs = 'e1') =>
    readRevocationEvent(deliveredAs, jws, { issuer: ISSUER, audience: AUDIENCE, jwks })
  const failure = (jws: Promise<string>, deliveredAs?: string) =>
    jws.then((j) => read(j, deliveredAs)).catch((e: unknown) => e)

  it('returns the revocation it announces', async () => {
    expect(await read(await set())).toEqual({ kind: 'grant_id', id: 'g1', until: 2000000000 })
    const family = { 'urn:linkauth:event:family-revoked': { family_id: 'f1', grant_id: 'g1', until: 5 } }
    expect(await read(await set({ events: family }))).toEqual({ kind: 'family_id', id: 'f1', until: 5 })
  })

  it('ignores an event type it does not know', async () => {
    expect(await read(await set({ events: { 'urn:example:new': { x: 1 } } }))).toBeUndefined()
  })

  it.each([
    ['another audience', () => set({ aud: 'rs_other' }), 'invalid_audience'],
    ['another issuer', () => set({ iss: 'https://evil.example' }), 'invalid_issuer'],
    ['a forged signature', () => set({}, {}, otherKey), 'invalid_key'],
    ['typ at+jwt (an access token)', () => set({}, { typ: 'at+jwt' }), 'invalid_request'],
    ['two events', () => set({ events: { ...grantRevoked, 'urn:example:x': {} } }), 'invalid_request'],
    [
      'no until',
      () => set({ events: { 'urn:linkauth:event:grant-revoked': { grant_id: 'g1' } } }),
      'invalid_request',
    ],
  ])('refuses %s', async (_name, jws, err) => {
    const e = await failure(jws())
    expect(e).toBeInstanceOf(SetError)
    expect(e).toMatchObject({ err })
  })

  it('refuses a SET delivered under another jti', async () => {
    expect(await failure(set(), 'e2')).toMatchObject({ err: 'invalid_request' })
    expect(await read(42).catch((e: unknown) => e)).toMatchObject({ err: 'invalid_request' })
  })

  it('leaves a SET with a key it lacks for later, rather than reporting it', async () => {
    expect(await failure(set({}, { kid: 'k2' }))).toBeInstanceOf(SetKeyUnknownError)
  })
})
