import { describe, expect, it } from 'vitest'
import {
  parsePrompt,
  readClientTarget,
  validateAuthorizationParameters,
} from '../../src/oauth/authorize-request.js'
import { clientRedirectUrl } from '../../src/oauth/client-redirect.js'

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'
const target = {
  clientId: 'client-1234',
  redirectUri: 'https://app.example/cb',
  allowedScopes: ['links:read', 'links:write'],
}
const valid = {
  client_id: 'client-1234',
  redirect_uri: 'https://app.example/cb',
  scope: 'links:read',
  code_challenge: CHALLENGE,
}

describe('readClientTarget', () => {
  it.each([
    [{}, 'The request has no client_id.'],
    [{ client_id: 'a' }, 'The request has no redirect_uri.'],
    [{ client_id: '', redirect_uri: 'x' }, 'The request has no client_id.'],
    [{ client_id: ['a', 'b'], redirect_uri: 'x' }, 'client_id is repeated.'],
    [{ client_id: 'a', redirect_uri: ['x', 'x'] }, 'redirect_uri is repeated.'],
  ])('refuses %j', (query, description) => {
    expect(readClientTarget(query)).toEqual({ ok: false, description })
  })
})

describe('validateAuthorizationParameters', () => {
  it('accepts the minimal request with S256 as the default method and no state', () => {
    expect(validateAuthorizationParameters(valid, target)).toEqual({
      ok: true,
      request: {
        clientId: 'client-1234',
        redirectUri: 'https://app.example/cb',
        scopes: ['links:read'],
        state: null,
        codeChallenge: CHALLENGE,
        prompt: [],
        resources: [],
        dpopJkt: null,
      },
      scopesDefaulted: false,
    })
  })

  it('without scope (or an empty one): the client’s defaults, in table order (RFC 6749 §3.3)', () => {
    const withDefaults = { ...target, defaultScopes: ['links:write', 'links:read'] }
    for (const scope of [undefined, '']) {
      const result = validateAuthorizationParameters({ ...valid, scope }, withDefaults)
      expect(result).toMatchObject({
        ok: true,
        request: { scopes: ['links:read', 'links:write'] },
        scopesDefaulted: true,
      })
    }
    // Defaults are the client's own, within its scopes: a named scope is still checked against those.
    expect(validateAuthorizationParameters({ ...valid, scope: 'products:sync' }, withDefaults)).toMatchObject(
      {
        ok: false,
        error: 'invalid_scope',
      },
    )
  })

  it('takes resource repeated, each an identifier of its own, in the order sent (RFC 8707 §2)', () => {
    const resource = [
      'https://links.example/api',
      'http://127.0.0.1:4000/',
      'http://[::1]/x',
      'http://localhost/',
    ]
    const result = validateAuthorizationParameters({ ...valid, resource }, target)
    expect(result.ok && result.request.resources).toEqual(resource)
  })

  it.each([
    ['relative', '/api'],
    ['no scheme', 'links.example'],
    ['a fragment', 'https://links.example/api#x'],
    ['an empty fragment', 'https://links.example/api#'],
    ['http off loopback', 'http://links.example/api'],
    ['another scheme', 'urn:example:api'],
    ['with a NUL byte', 'https://links.example/a\u0000b'],
    ['with a space', 'https://links.example/a b'],
    ['over 2048 characters', `https://links.example/${'a'.repeat(2030)}`],
  ])('refuses a resource that is %s with invalid_target', (_why, resource) => {
    const result = validateAuthorizationParameters({ ...valid, resource }, target)
    expect(result).toMatchObject({ ok: false, error: 'invalid_target' })
  })

  it('refuses the same resource twice, and a bad one among good ones, with invalid_target', () => {
    for (const resource of [
      ['https://a.example/', 'https://a.example/'],
      ['https://a.example/', '/b'],
    ]) {
      expect(validateAuthorizationParameters({ ...valid, resource }, target)).toMatchObject({
        ok: false,
        error: 'invalid_target',
      })
    }
  })

  it('puts scopes in table order whatever order they came in', () => {
    const result = validateAuthorizationParameters({ ...valid, scope: 'links:write links:read' }, target)
    expect(result.ok && result.request.scopes).toEqual(['links:read', 'links:write'])
  })

  it.each([
    [{ scope: ['links:read', 'links:write'] }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ response_type: 'code token' }, 'unsupported_response_type'],
    [{ code_challenge: undefined }, 'invalid_request'],
    [{ code_challenge: CHALLENGE.slice(1) }, 'invalid_request'],
    [{ code_challenge: `${CHALLENGE}A` }, 'invalid_request'],
    [{ code_challenge: `${CHALLENGE.slice(1)}=` }, 'invalid_request'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge_method: 's256' }, 'invalid_request'],
    [{ scope: undefined }, 'invalid_scope'],
    [{ scope: 'links:read  links:write' }, 'invalid_scope'],
    [{ scope: 'links:delete' }, 'invalid_scope'],
    [{ scope: 'links:read products:sync' }, 'invalid_scope'],
    [{ prompt: 'select_account' }, 'invalid_request'],
    [{ prompt: 'none consent' }, 'invalid_request'],
    [{ state: 'x'.repeat(1025) }, 'invalid_request'],
  ])('%j → %s', (change, error) => {
    const result = validateAuthorizationParameters({ ...valid, ...change }, target)
    expect(result).toMatchObject({ ok: false, error })
  })

  it('echoes a single state of at most 1 KiB and no other', () => {
    const fail = { ...valid, response_type: 'token' }
    expect(validateAuthorizationParameters({ ...fail, state: 'a b&c' }, target)).toMatchObject({
      state: 'a b&c',
    })
    expect(validateAuthorizationParameters({ ...fail, state: 'x'.repeat(1024) }, target)).toMatchObject({
      state: 'x'.repeat(1024),
    })
    expect(validateAuthorizationParameters({ ...fail, state: 'x'.repeat(1025) }, target)).toMatchObject({
      state: null,
    })
    expect(validateAuthorizationParameters({ ...fail, state: ['a', 'b'] }, target)).toMatchObject({
      state: null,
    })
  })

  it('ignores unknown parameters, even repeated ones', () => {
    expect(validateAuthorizationParameters({ ...valid, foo: ['1', '2'] }, target).ok).toBe(true)
  })
})

describe('parsePrompt', () => {
  it.each([
    [undefined, []],
    ['none', ['none']],
    ['login', ['login']],
    ['consent', ['consent']],
    ['login consent', ['login', 'consent']],
    ['none login', null],
    ['consent consent', null],
    ['Login', null],
    ['', null],
  ])('%j → %j', (value, expected) => {
    expect(parsePrompt(value)).toEqual(expected)
  })
})

describe('clientRedirectUrl', () => {
  it('appends to a URI without a query', () => {
    expect(clientRedirectUrl('https://a.example/cb', { code: 'c', state: 's t', iss: 'https://i' })).toBe(
      'https://a.example/cb?code=c&state=s+t&iss=https%3A%2F%2Fi',
    )
  })
  it('keeps an existing query byte for byte and leaves out null values', () => {
    expect(clientRedirectUrl('https://a.example/cb?x=%20y&z', { code: 'c', state: null })).toBe(
      'https://a.example/cb?x=%20y&z&code=c',
    )
    expect(clientRedirectUrl('https://a.example/cb?', { code: 'c' })).toBe('https://a.example/cb?code=c')
  })
  it('works for a private-use scheme', () => {
    expect(clientRedirectUrl('com.example.app:/cb', { error: 'access_denied' })).toBe(
      'com.example.app:/cb?error=access_denied',
    )
  })
})
