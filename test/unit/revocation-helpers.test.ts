import { describe, expect, it } from 'vitest'
import { generateKeyPairSync } from 'node:crypto'
import { returnPath } from '../../src/accounts/return-path.js'
import { signJwt } from '../../src/tokens/access-token.js'
import { createAccessTokenVerifier } from '../../src/tokens/access-token-verifier.js'
import { parseBasicAuthorization } from '../../src/web/basic-auth.js'
import { createTestClock } from '../helpers/clock.js'

describe('parseBasicAuthorization', () => {
  const basic = (raw: string) => `Basic ${Buffer.from(raw).toString('base64')}`

  it('reads id and secret, form-decoding each (RFC 6749 §2.3.1)', () => {
    expect(parseBasicAuthorization(basic('rs_abc:s3cret'))).toEqual({ id: 'rs_abc', secret: 's3cret' })
    expect(parseBasicAuthorization(basic('a%3Ab:c+d%2B%25'))).toEqual({ id: 'a:b', secret: 'c d+%' })
    expect(parseBasicAuthorization(basic('id:se:cret'))).toEqual({ id: 'id', secret: 'se:cret' })
    expect(parseBasicAuthorization(`basic ${Buffer.from('x:y').toString('base64')}`)).toEqual({
      id: 'x',
      secret: 'y',
    })
  })

  it.each([
    undefined,
    '',
    'Basic',
    'Basic ',
    'Bearer abc',
    'Basic @@@',
    basic('nocolon'),
    basic(':secret'),
    basic('id:'),
    basic('bad%zz:secret'),
    `Basic ${'A'.repeat(2000)}`,
  ])('refuses %j', (header) => {
    expect(parseBasicAuthorization(header)).toBeUndefined()
  })
})

describe('returnPath', () => {
  it('knows only its own table', () => {
    expect(returnPath('account-apps')).toBe('/account/apps')
    for (const next of [undefined, '', '/account/apps', 'https://evil.example', 'toString', '__proto__'])
      expect(returnPath(next)).toBeUndefined()
  })
})

describe('access token verifier', () => {
  const clock = createTestClock(new Date('2026-03-01T12:00:00Z'))
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const key = { kid: 'k'.repeat(43), alg: 'ES256' as const }
  const verifier = createAccessTokenVerifier({ issuer: 'https://as.example' }, clock, {
    verificationKey: async (kid) => (kid === key.kid ? { ...key, publicKey, retiredAt: null } : undefined),
  })
  const now = Math.floor(clock.now().getTime() / 1000)
  const claims = {
    iss: 'https://as.example',
    sub: '0b5f9d1e-1111-4a2b-9c3d-000000000001',
    aud: 'https://as.example/api',
    exp: now + 600,
    iat: now,
    jti: '0b5f9d1e-1111-4a2b-9c3d-000000000002',
    client_id: 'client-12345678',
    scope: 'links:read',
    grant_id: '0b5f9d1e-1111-4a2b-9c3d-000000000003',
    family_id: '0b5f9d1e-1111-4a2b-9c3d-000000000004',
  }
  const sign = (header: Record<string, unknown>, body: Record<string, unknown> = claims, alg = key.alg) =>
    signJwt(header, body, { kid: key.kid, alg, privateKey })

  it('accepts typ at+jwt and application/at+jwt', async () => {
    expect((await verifier.verify(sign({ typ: 'at+jwt' }))).ok).toBe(true)
    expect((await verifier.verify(sign({ typ: 'application/at+jwt' }))).ok).toBe(true)
  })

  it.each([
    ['no typ', sign({}), 'wrong_type'],
    ['typ JWT', sign({ typ: 'JWT' }), 'wrong_type'],
    ['a claim missing', sign({ typ: 'at+jwt' }, { ...claims, grant_id: undefined }), 'invalid_claims'],
    ['a jti that is no UUID', sign({ typ: 'at+jwt' }, { ...claims, jti: 'x' }), 'invalid_claims'],
    ['another issuer', sign({ typ: 'at+jwt' }, { ...claims, iss: 'https://other.example' }), 'wrong_issuer'],
    ['expired', sign({ typ: 'at+jwt' }, { ...claims, exp: now }), 'token_expired'],
  ] as const)('refuses %s', async (_name, token, reason) => {
    expect(await verifier.verify(token)).toMatchObject({ ok: false, reason })
  })

  it('refuses a header alg other than the key’s (no alg confusion)', async () => {
    const token = sign({ typ: 'at+jwt' })
    const [, payload, signature] = token.split('.')
    const header = Buffer.from(JSON.stringify({ typ: 'at+jwt', kid: key.kid, alg: 'HS256' })).toString(
      'base64url',
    )
    expect(await verifier.verify(`${header}.${payload}.${signature}`)).toMatchObject({
      reason: 'bad_signature',
    })
  })
})
